package strategy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/internal/strategy/strategytest"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// flip119Job is FLIP-119's example (examples/jobs/flip119.json):
// A(2) -forward-> B(2) -rescale-> C(4) -hash-> D(4).
func flip119Job(t testing.TB) *topology.JobGraph { return testjobs.FLIP119(t) }

// cycleJob is the FLINK-17330 case: src -forward pipelined-> join,
// side -forward pipelined-> join, src -hash blocking-> side. The blocking
// edge makes the per-subtask regions depend on each other in a cycle.
func cycleJob(t testing.TB) *topology.JobGraph {
	t.Helper()
	g, err := topology.NewBuilder("cycle").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "side", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "join", Parallelism: 2}).
		ConnectPinned("src", "join", exchange.Forward, exchange.PipelinedBounded).
		ConnectPinned("side", "join", exchange.Forward, exchange.PipelinedBounded).
		ConnectPinned("src", "side", exchange.Hash, exchange.Blocking).
		Build()
	require.NoError(t, err)
	return g
}

// crossJob has a cross-region group (FLINK-22017): S(4) -rescale
// pipelined-> X(3) -rescale pipelined-> T(2) makes the regions
// {S#0 X#0 T#0} and {S#1 S#2 S#3 X#1 X#2 T#1}, and S -rescale blocking-> T
// makes T#0 read S#0 (its own region) and S#1 (the other region).
func crossJob(t testing.TB) *topology.JobGraph {
	t.Helper()
	g, err := topology.NewBuilder("cross").
		AddVertex(topology.JobVertex{ID: "S", Parallelism: 4}).
		AddVertex(topology.JobVertex{ID: "X", Parallelism: 3}).
		AddVertex(topology.JobVertex{ID: "T", Parallelism: 2}).
		ConnectPinned("S", "X", exchange.Rescale, exchange.PipelinedBounded).
		ConnectPinned("X", "T", exchange.Rescale, exchange.PipelinedBounded).
		ConnectPinned("S", "T", exchange.Rescale, exchange.Blocking).
		Build()
	require.NoError(t, err)
	return g
}

// twoVertexJob is src(p) -hash-> sink(p), the job of docs/architecture.md.
func twoVertexJob(t testing.TB, p int) *topology.JobGraph {
	t.Helper()
	g, err := topology.NewBuilder("two-vertex").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: p}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: p}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	return g
}

// recorderFor returns a recorder over a fresh strategy for job under mode.
func recorderFor(job *topology.JobGraph, mode exchange.Mode, opts ...strategy.Option) *strategytest.Recorder {
	return strategytest.NewRecorder(strategy.New(region.FromJob(job, mode), opts...))
}

// vertexByName resolves "A#0".
func vertexByName(t testing.TB, s *strategy.Strategy, name string) topology.ExecutionVertexID {
	t.Helper()
	v, err := s.Regions().Topology().ParseVertexName(name)
	require.NoError(t, err)
	return v
}

// regionByName returns the region of vertex "A#0".
func regionByName(t testing.TB, s *strategy.Strategy, name string) region.ID {
	t.Helper()
	return s.Regions().RegionOf(vertexByName(t, s, name))
}

// regionString renders a region as its members, "{A#0 B#0}".
func regionString(s *strategy.Strategy, r region.ID) string {
	var names []string
	for _, v := range s.Regions().Members(r) {
		names = append(names, s.Regions().Topology().VertexName(v))
	}
	return "{" + strings.Join(names, " ") + "}"
}

// deployedStrings renders the deployed regions of d.
func deployedStrings(s *strategy.Strategy, d strategy.Decisions) []string {
	var out []string
	for _, dep := range d.Deploy {
		out = append(out, regionString(s, dep.Region))
	}
	return out
}

// regionStrings renders region ids.
func regionStrings(s *strategy.Strategy, rs []region.ID) []string {
	var out []string
	for _, r := range rs {
		out = append(out, regionString(s, r))
	}
	return out
}

// partitionStrings renders partitions as "A#0->B".
func partitionStrings(s *strategy.Strategy, ps []topology.ResultPartitionID) []string {
	t := s.Regions().Topology()
	var out []string
	for _, p := range ps {
		_, target := t.Job().EdgeEnds(t.EdgeOfPartition(p))
		out = append(out, t.VertexName(t.PartitionProducer(p))+"->"+t.Job().Vertex(target).ID)
	}
	return out
}

// partitionByName resolves "A#0->B": the partition A#0 writes for its edge to B.
func partitionByName(t testing.TB, s *strategy.Strategy, name string) topology.ResultPartitionID {
	t.Helper()
	producer, target, ok := strings.Cut(name, "->")
	require.True(t, ok, name)
	v := vertexByName(t, s, producer)
	topo := s.Regions().Topology()
	for _, e := range topo.Job().OutEdges(topo.JobVertexOf(v)) {
		if _, dst := topo.Job().EdgeEnds(e); topo.Job().Vertex(dst).ID == target {
			return topo.PartitionOf(e, v)
		}
	}
	require.Failf(t, "no such partition", "%s", name)
	return 0
}

// finishAll reports every member of the deployed regions finished,
// depth-first, until nothing is left to deploy; it returns the regions
// deployed on the way, in order.
func finishAll(t testing.TB, s *strategy.Strategy, d strategy.Decisions) []region.ID {
	t.Helper()
	var deployed []region.ID
	queue := append([]strategy.Deployment(nil), d.Deploy...)
	for len(queue) > 0 {
		dep := queue[0]
		queue = queue[1:]
		deployed = append(deployed, dep.Region)
		for _, v := range s.Regions().Members(dep.Region) {
			next, err := s.UpdateState(v, dep.Attempt, strategy.TaskFinished)
			require.NoError(t, err)
			queue = append(queue, next.Deploy...)
		}
	}
	return deployed
}
