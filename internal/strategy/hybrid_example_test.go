package strategy_test

import (
	"errors"
	"fmt"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// A job A(2) -hash-> B(1) with hybrid exchanges: B's region may start
// once both A regions are deployed (full), or once they are and half of
// them finished (selective, WithSelectiveShare(0.5)); B never finishes
// before every A.
func ExampleWithSelectiveShare() {
	job, err := topology.NewBuilder("hybrid").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 1}).
		Connect("A", "B", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	for _, mode := range []exchange.Mode{exchange.AllHybridFull, exchange.AllHybridSelective} {
		rs := region.FromJob(job, mode)
		topo := rs.Topology()
		v := func(name string) topology.ExecutionVertexID {
			x, err := topo.ParseVertexName(name)
			if err != nil {
				panic(err)
			}
			return x
		}
		s := strategy.New(rs, strategy.WithSelectiveShare(0.5))
		show := func(event string, d strategy.Decisions, err error) {
			if err != nil {
				panic(err)
			}
			var deploy []region.ID
			for _, dep := range d.Deploy {
				deploy = append(deploy, dep.Region)
			}
			fmt.Printf("%s: %s: deploy regions %v\n", mode, event, deploy)
		}
		d, err := s.Start()
		show("start", d, err)
		_, d, err = s.MarkDeploying(rs.RegionOf(v("A#0")))
		show("A#0 deploying", d, err)
		_, d, err = s.MarkDeploying(rs.RegionOf(v("A#1")))
		show("A#1 deploying", d, err)
		d, err = s.UpdateState(v("A#0"), 0, strategy.TaskFinished)
		show("A#0 finished", d, err)
		_, err = s.UpdateState(v("B#0"), 0, strategy.TaskFinished)
		fmt.Printf("%s: B#0 finished before A#1: refused: %t\n", mode, errors.Is(err, strategy.ErrEarlyFinish))
	}
	// Output:
	// all-hybrid-full: start: deploy regions [0 1]
	// all-hybrid-full: A#0 deploying: deploy regions []
	// all-hybrid-full: A#1 deploying: deploy regions [2]
	// all-hybrid-full: A#0 finished: deploy regions []
	// all-hybrid-full: B#0 finished before A#1: refused: true
	// all-hybrid-selective: start: deploy regions [0 1]
	// all-hybrid-selective: A#0 deploying: deploy regions []
	// all-hybrid-selective: A#1 deploying: deploy regions []
	// all-hybrid-selective: A#0 finished: deploy regions [2]
	// all-hybrid-selective: B#0 finished before A#1: refused: true
}
