package kubernetes_test

import (
	"context"
	"fmt"
	"os"

	"github.com/benbjohnson/clock"
	corev1 "k8s.io/api/core/v1"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// Run runs jobs' tasks as pods of the cluster a kubeconfig names: the
// nodes' room becomes slots of one shape, the in-process admission
// decides over the queues, and every region's pods are bound
// all-or-nothing. It returns when every job ended or ctx is done; either
// way no pod of the run is left. (Compiled, not run: it needs a cluster.)
func ExampleRun() {
	kubeconfig := os.Getenv("KUBECONFIG")
	ctx := context.Background()
	queues := []admission.QueueConfig{{Name: "root.etl", Policy: admission.StateAware}}
	f, err := os.Open("examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		panic(err)
	}
	regions := region.FromJob(job, exchange.PointwisePipelinedOnly)

	client, err := kubernetes.NewClient(kubeconfig, 200)
	if err != nil {
		panic(err)
	}
	ends, err := kubernetes.Run(ctx, kubernetes.RunnerConfig{
		Client: client, Run: "etl-20260101", Shape: resource.New(1000, 1024),
		Jobs:     multijob.Config{Admission: admission.Config{Queues: queues}},
		Template: kubernetes.PodTemplate{Namespace: "batch", Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "task", Image: "example.com/task:1"}}}},
	}, clock.New(), kubernetes.DefaultPoll, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "etl"}, Regions: regions})
	if err != nil {
		panic(err)
	}
	for _, end := range ends {
		fmt.Println(end.Job, end.Outcome)
	}
}
