package multijob_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/benbjohnson/clock"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// A runtime with goroutines: the driver runs the jobs' schedulers and the
// admission on its own loop; one goroutine of the runtime reads the Ready
// values and hands each deployment to a worker goroutine, which runs the
// task to its end and reports it. Two jobs, each one region of 2 slots,
// share a fifo queue of 2 slots: the second deploys when the first has
// given its slots back. The mock clock stands in for the wall clock.
func ExampleDriver() {
	job, err := topology.NewBuilder("pair").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 2}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllPipelined)
	s, err := multijob.New(multijob.Config{Admission: admission.Config{
		Slots: []slotpool.Slot{{ID: 1}, {ID: 2}}, DefaultPolicy: admission.FIFO}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	d := multijob.StartDriver(ctx, s, multijob.DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()

	// The worker: runs every deployed task to its end, in the order given.
	type work struct {
		job string
		dep scheduler.Deployment
	}
	deployed := make(chan work, 8)
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		for w := range deployed {
			if err := d.TaskFinished(ctx, w.job, w.dep.Task, w.dep.Attempt); err != nil {
				fmt.Println("error:", err)
			}
		}
	}()

	for _, name := range []string{"first", "second"} {
		if err := d.Submit(ctx, multijob.JobSpec{JobSpec: admission.JobSpec{Name: name}, Regions: rs}); err != nil {
			panic(err)
		}
	}
	ended := 0
	for rd := range d.Ready() { // the one consumer of the Ready values
		// (cancels first, in a runtime whose jobs may fail or be killed)
		for _, end := range rd.Ended {
			fmt.Println(end.Job, end.Outcome)
			ended++
		}
		for _, jr := range rd.Jobs {
			if len(jr.Deploy) == 0 {
				continue
			}
			var tasks []string
			for _, dep := range jr.Deploy {
				tasks = append(tasks, rs.Topology().VertexName(dep.Task))
				deployed <- work{job: jr.Job, dep: dep}
			}
			slices.Sort(tasks)
			fmt.Println(jr.Job, "deploys", tasks)
		}
		if ended == 2 {
			break
		}
	}
	close(deployed)
	<-workerDone
	st, err := d.Status(ctx, "second")
	if err != nil {
		panic(err)
	}
	fmt.Println("second:", st.Admission, "holding", st.Granted, "slots")
	d.Stop()
	// Output:
	// first deploys [sink#0 sink#1 src#0 src#1]
	// first finished
	// second deploys [sink#0 sink#1 src#0 src#1]
	// second finished
	// second: completed holding 0 slots
}
