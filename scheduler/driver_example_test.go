package scheduler_test

import (
	"context"
	"fmt"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// A runtime with goroutines: the driver runs the scheduler on its own
// loop; one goroutine of the runtime reads the Ready values and hands each
// deployment to a worker goroutine, which runs the task to its end and
// reports it. The mock clock stands in for the wall clock (no timeout
// fires here). The output lists the deployments and job changes in the
// order the Ready values carry them.
func ExampleDriver() {
	job, err := topology.NewBuilder("two-vertex").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	topo := rs.Topology()
	ctx := context.Background()
	s, err := scheduler.New(rs, scheduler.Config{})
	if err != nil {
		panic(err) // a Config{} is valid
	}
	d := scheduler.StartDriver(ctx, s, scheduler.DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()

	// The worker: runs every deployed task to its end, in the order given.
	deployed := make(chan scheduler.Deployment, 8)
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		for dep := range deployed {
			if err := d.TaskRunning(ctx, dep.Task, dep.Attempt); err != nil {
				fmt.Println("error:", err)
			}
			if err := d.TaskFinished(ctx, dep.Task, dep.Attempt); err != nil {
				fmt.Println("error:", err)
			}
		}
	}()

	if err := d.Offer(ctx, scheduler.Slot{ID: 1}, scheduler.Slot{ID: 2}); err != nil {
		panic(err)
	}
	if err := d.Start(ctx); err != nil {
		panic(err)
	}
	for rd := range d.Ready() { // the one consumer of the Ready values
		for _, c := range rd.Cancel {
			fmt.Printf("cancel %s attempt %d\n", topo.VertexName(c.Task), c.Attempt)
		}
		for _, dep := range rd.Deploy {
			fmt.Printf("deploy %s attempt %d in slot %d\n", topo.VertexName(dep.Task), dep.Attempt, dep.Slot)
			deployed <- dep
		}
		if rd.Job != nil {
			fmt.Println("job", rd.Job.State)
			if rd.Job.State != scheduler.JobRunning {
				break
			}
		}
	}
	close(deployed)
	<-workerDone
	st, err := d.Status(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v, %d free slots\n", st.Stats, st.Pool.Free)
	d.Stop()
	// Output:
	// deploy src#0 attempt 0 in slot 2
	// deploy src#1 attempt 0 in slot 1
	// job running
	// deploy sink#0 attempt 0 in slot 1
	// job finished
	// {RegionsDeployed:3 Failovers:0 RegionRestarts:0 RegionsShared:0}, 2 free slots
}
