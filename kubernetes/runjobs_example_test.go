package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// RunJobs runs job files as "regionsched run --kubernetes" does: each job
// at its submitAtMs, in its queue, with its priority; every pod of the run
// deleted when it ends, SIGTERM included. (Compiled, not run: it needs a
// cluster.)
func ExampleRunJobs() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	data, err := os.ReadFile("examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	g, err := topology.DecodeBytes(data)
	if err != nil {
		panic(err)
	}
	client, err := kubernetes.NewClient(os.Getenv("KUBECONFIG"), 200)
	if err != nil {
		panic(err)
	}
	res, err := kubernetes.RunJobs(ctx, kubernetes.JobsConfig{
		Runner: kubernetes.RunnerConfig{Client: client, Shape: resource.New(1000, 1024)},
		Mode:   exchange.PointwisePipelinedOnly,
		Trace:  func(ev runfile.Event) { fmt.Println(ev.At, ev.Kind, ev.Task) },
	}, clock.New(), runfile.Job{Name: "flip119", Job: g})
	if err != nil {
		panic(err) // nothing ran: no node, no API server, a job with a driver
	}
	for _, j := range res.Jobs {
		fmt.Printf("%s: %d pods in %d bulks, error %v\n", j.Name, j.Pods, j.Bulks, j.Err)
	}
}
