package slurm_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/slurm"
	"github.com/regionsched/regionsched/topology"
)

// Run a job on the Slurm cluster SLURM_CONF names, each region's bulk
// of slots an allocation in partition "batch", each task a job step.
// SIGINT and SIGTERM cancel ctx: Run then cancels every allocation of
// the run before it returns. (It needs a cluster, so it is only
// compiled.)
func ExampleRun() {
	job, err := topology.DecodeBytes([]byte(`{"name": "etl", "vertices": [
		{"id": "read", "parallelism": 2, "durationMs": 500},
		{"id": "sum", "parallelism": 1, "durationMs": 200}],
		"edges": [{"source": "read", "target": "sum", "shipStrategy": "hash"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, _ := zap.NewDevelopment()
	res, err := slurm.Run(ctx, slurm.RunConfig{
		Client:    &slurm.ExecClient{Conf: os.Getenv("SLURM_CONF")},
		Mode:      exchange.AllBlocking,
		Partition: "batch",
		TimeLimit: time.Hour, // Slurm ends what a runner killed outright leaves
		Logger:    log,
		Trace:     func(ev runfile.Event) { fmt.Println(ev.At, ev.Kind, ev.Task) },
		Notify: func(n slurm.Notice) {
			if n.Kind == slurm.OutageBegan {
				fmt.Println("slurmctld unreachable:", n.Err)
			}
		},
	}, runfile.Job{Name: "etl", Job: job})
	if err != nil {
		fmt.Println("not started:", err) // no Slurm reachable, no such partition, ...
		return
	}
	fmt.Println("run", res.RunID, "tagged", slurm.Tag(res.RunID))
	for _, j := range res.Jobs {
		fmt.Println(j.Name, j.Err, j.End, len(j.Allocations), "allocations")
	}
}
