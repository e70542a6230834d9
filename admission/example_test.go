package admission_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// A static cluster of two small slots and a big one, plugged into the
// scheduler of a batch job, src(2, small) -hash, blocking-> sink(1, big):
// the job's pool asks the cluster for the slots of each region as it
// becomes ready, and the cluster grants the smallest that serve it; a
// slot idle for a second goes back. A job whose region is larger than
// every slot fails at once, since the cluster declared its capacity.
func Example() {
	small := resource.New(500, 512)
	big := resource.New(2000, 4096)
	now := time.Unix(0, 0)
	newCluster := func() *admission.StaticCluster {
		cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension,
			slotpool.Slot{ID: 1, Profile: small}, slotpool.Slot{ID: 2, Profile: small}, slotpool.Slot{ID: 3, Profile: big})
		if err != nil {
			panic(err)
		}
		return cluster
	}

	job, err := topology.NewBuilder("batch").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2, Resources: small}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1, Resources: big}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	cluster := newCluster()
	s, err := scheduler.New(rs, scheduler.Config{Admission: cluster, Pool: slotpool.Config{IdleTimeout: time.Second}})
	if err != nil {
		panic(err)
	}
	deployed := func() {
		for _, d := range s.Ready().Deploy {
			fmt.Printf("%s in slot %d\n", s.TaskName(d.Task), d.Slot)
		}
	}
	_ = s.Start(now)
	deployed()
	for _, name := range []string{"src#0", "src#1", "sink#0"} {
		v, _ := rs.Topology().ParseVertexName(name)
		_ = s.TaskFinished(now, v, 0)
		deployed()
	}
	fmt.Println("in the cluster:", len(cluster.Available()), "slots")
	_ = s.Tick(now.Add(time.Second))
	fmt.Println("a second later:", len(cluster.Available()), "slots")

	huge, err := topology.NewBuilder("huge").
		AddVertex(topology.JobVertex{ID: "train", Parallelism: 1, Resources: resource.New(8000, 8192)}).
		Build()
	if err != nil {
		panic(err)
	}
	if s, err = scheduler.New(region.FromJob(huge, exchange.AllBlocking), scheduler.Config{Admission: newCluster()}); err != nil {
		panic(err)
	}
	fmt.Println(s.Start(now))
	// Output:
	// src#0 in slot 1
	// src#1 in slot 2
	// sink#0 in slot 3
	// in the cluster: 0 slots
	// a second later: 3 slots
	// scheduler: job failed: region 0 {train#0} needs 1 slot at once; the cluster can never give it: missing 1 x {cpu=8000m mem=8192MB}
}
