package strategy_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// A job A(2) -hash-> B(2), all blocking: four regions of one subtask each.
// B#0 fails after the machine that ran A#1 was lost, so A#1 runs again,
// and B#1 too because it reads A#1.
func Example() {
	job, err := topology.NewBuilder("example").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 2}).
		Connect("A", "B", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	topo := rs.Topology()
	vertex := func(name string) topology.ExecutionVertexID {
		v, err := topo.ParseVertexName(name)
		if err != nil {
			panic(err)
		}
		return v
	}
	regionNames := func(ids []region.ID) string {
		var out []string
		for _, r := range ids {
			var names []string
			for _, v := range rs.Members(r) {
				names = append(names, topo.VertexName(v))
			}
			out = append(out, "{"+strings.Join(names, " ")+"}")
		}
		return strings.Join(out, " ")
	}
	show := func(event string, d strategy.Decisions, err error) {
		if err != nil {
			panic(err)
		}
		line := fmt.Sprintf("%-22s", event+":")
		for _, dep := range d.Deploy {
			line += fmt.Sprintf(" deploy %s@%d", regionNames([]region.ID{dep.Region}), dep.Attempt)
		}
		for _, p := range d.Release {
			line += fmt.Sprintf(" release %s->B", topo.VertexName(topo.PartitionProducer(p)))
		}
		fmt.Println(strings.TrimSpace(line))
	}

	s := strategy.New(rs)
	d, err := s.Start()
	show("start", d, err)
	d, err = s.UpdateState(vertex("A#0"), 0, strategy.TaskFinished)
	show("A#0 finished", d, err)
	d, err = s.UpdateState(vertex("A#1"), 0, strategy.TaskFinished)
	show("A#1 finished", d, err)
	d, err = s.UpdateState(vertex("B#0"), 0, strategy.TaskFailed)
	show("B#0 failed", d, err)

	lost, _ := s.BlockingPartitionsOf(vertex("A#1"))
	restart, _ := s.RegionsToRestart(vertex("B#0"), lost...)
	fmt.Println("restart:", regionNames(restart))
	d, err = s.UpdateState(vertex("B#1"), 0, strategy.TaskCanceled)
	show("B#1 canceled", d, err)
	d, err = s.Restart(restart)
	show("restarted", d, err)

	_, err = s.UpdateState(vertex("B#1"), 0, strategy.TaskFinished)
	fmt.Println("late B#1 finished is stale:", errors.Is(err, strategy.ErrStaleAttempt))

	d, err = s.UpdateState(vertex("A#1"), 1, strategy.TaskFinished)
	show("A#1 finished again", d, err)
	d, err = s.UpdateState(vertex("B#0"), 1, strategy.TaskFinished)
	show("B#0 finished", d, err)
	d, err = s.UpdateState(vertex("B#1"), 1, strategy.TaskFinished)
	show("B#1 finished", d, err)
	fmt.Println("job finished:", s.Finished())

	// Output:
	// start:                 deploy {A#0}@0 deploy {A#1}@0
	// A#0 finished:
	// A#1 finished:          deploy {B#0}@0 deploy {B#1}@0
	// B#0 failed:
	// restart: {A#1} {B#0} {B#1}
	// B#1 canceled:
	// restarted:             deploy {A#1}@1
	// late B#1 finished is stale: true
	// A#1 finished again:    deploy {B#0}@1 deploy {B#1}@1
	// B#0 finished:
	// B#1 finished:          release A#0->B release A#1->B
	// job finished: true
}
