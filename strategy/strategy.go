package strategy

import (
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Strategy is the pipelined region scheduling strategy of one job, with
// region failover and partition release. It is a deterministic state
// machine: no goroutines, no clock, no randomness; the same calls in the
// same order return the same decisions. It is not safe for concurrent use:
// the runtime calls it from its event loop.
//
// Every counter is kept on dense int32 indexes:
//   - per blocking partition group g, for each distinct producer region of
//     g, the number of its unfinished partitions in g (a "share" of g is
//     the part of g one producer region writes); the number of shares with
//     an unfinished partition (pendingProducers) and the sum of their
//     positions (pendingShareSum), which names the last one when one is
//     left, the trick region.Build uses for its topological order;
//   - per region, the number of consumed groups not yet satisfied, where
//     consumer c is satisfied on g when every partition of g produced
//     outside c is finished, i.e. pendingProducers[g] == 0, or it is 1 and
//     the pending producer region is c itself (cross-region groups,
//     FLINK-22017);
//   - per group, the number of consumer regions not finished (release).
//
// A finish changes one share counter per produced partition and touches a
// group's consumer list only when the group completes, so every event
// costs O(1) amortized plus the regions it schedules.
type Strategy struct {
	regions *region.Regions
	topo    *topology.ExecutionTopology
	log     *zap.Logger
	started bool

	// per job vertex: its blocking out-edges.
	blockingOut [][]topology.JobEdgeID

	// per execution vertex.
	vertexState []ExecutionState

	// per region.
	regionState       []RegionState
	attempt           []Attempt
	unsatisfied       []int32
	unfinishedMembers []int32
	finishedRegions   int

	// per partition group; all zero for pipelined groups.
	shareStart          []int32 // shares of g: shareStart[g] ... shareStart[g+1]-1
	pendingProducers    []int32
	pendingShareSum     []int64 // sum of (share - shareStart[g]) over pending shares
	unfinishedConsumers []int32
	releasedPartitions  []int32

	// per share, in GroupProducerRegions order.
	shareUnfinished []int32
	shareConsumes   []bool // the share's producer region also consumes the group

	// per result partition; only blocking partitions are used.
	partitionState []partitionState
	partitionShare []int32

	// output of the event being handled, drained by takeDecisions.
	ready   []region.ID
	release []topology.ResultPartitionID

	// reuse: Decisions' slices are recycled (WithReusedDecisions).
	reuse      bool
	deployBuf  []Deployment
	releaseBuf []topology.ResultPartitionID

	walk failoverScratch // allocated by the first RegionsToRestart
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithLogger makes the strategy log to l (decisions at debug level,
// restarts at info level); nil keeps the default, zap.NewNop(). The
// global logger is never used.
func WithLogger(l *zap.Logger) Option {
	return func(s *Strategy) {
		if l != nil {
			s.log = l
		}
	}
}

// WithReusedDecisions makes the strategy recycle the slices of the
// Decisions it returns: they are valid only until the next call of a
// method that returns Decisions (Start, UpdateState, Restart). A caller
// that acts on each Decisions at once (package scheduler) saves an
// allocation or two per event; by default the caller owns the slices.
func WithReusedDecisions() Option {
	return func(s *Strategy) { s.reuse = true }
}

// New returns the strategy for the regions rs (not nil), every region
// waiting and every vertex TaskCreated. Nothing is scheduled before Start.
// Cost O(subtasks + partitions + regions + the groups' region lists).
func New(rs *region.Regions, opts ...Option) *Strategy {
	t := rs.Topology()
	s := &Strategy{regions: rs, topo: t, log: zap.NewNop()}
	for _, o := range opts {
		o(s)
	}
	s.initVertices()
	s.initGroups()
	s.initRegions()
	return s
}

func (s *Strategy) initVertices() {
	job := s.topo.Job()
	s.blockingOut = make([][]topology.JobEdgeID, job.NumVertices())
	for jv := range topology.JobVertexID(job.NumVertices()) {
		for _, e := range job.OutEdges(jv) {
			if !s.topo.PartitionType(e).IsPipelined() {
				s.blockingOut[jv] = append(s.blockingOut[jv], e)
			}
		}
	}
	s.vertexState = make([]ExecutionState, s.topo.NumExecutionVertices())
}

// initGroups sets up the shares of every blocking group, all unfinished.
func (s *Strategy) initGroups() {
	rs, t := s.regions, s.topo
	groups := t.NumGroups()
	s.shareStart = make([]int32, groups+1)
	for g := range groups {
		s.shareStart[g+1] = s.shareStart[g] + int32(len(rs.GroupProducerRegions(topology.GroupID(g))))
	}
	shares := s.shareStart[groups]
	s.shareUnfinished = make([]int32, shares)
	s.shareConsumes = make([]bool, shares)
	s.pendingProducers = make([]int32, groups)
	s.pendingShareSum = make([]int64, groups)
	s.unfinishedConsumers = make([]int32, groups)
	s.releasedPartitions = make([]int32, groups)
	s.partitionState = make([]partitionState, t.NumPartitions())
	s.partitionShare = make([]int32, t.NumPartitions())

	position := make([]int32, rs.NumRegions()) // of a producer region in the group's list
	job := t.Job()
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if t.PartitionType(e).IsPipelined() {
			continue
		}
		gs := t.GroupsOf(e)
		for g := topology.GroupID(gs.Start); g < topology.GroupID(gs.End); g++ {
			producers := rs.GroupProducerRegions(g)
			consumers := rs.GroupConsumerRegions(g)
			k := int64(len(producers))
			s.pendingProducers[g] = int32(k)
			s.pendingShareSum[g] = k * (k - 1) / 2
			s.unfinishedConsumers[g] = int32(len(consumers))
			base := s.shareStart[g]
			j := 0
			for i, r := range producers {
				position[r] = int32(i)
				for j < len(consumers) && consumers[j] < r {
					j++
				}
				s.shareConsumes[base+int32(i)] = j < len(consumers) && consumers[j] == r
			}
			pg := t.Group(g)
			for v := topology.ExecutionVertexID(pg.Producers.Start); v < topology.ExecutionVertexID(pg.Producers.End); v++ {
				share := base + position[rs.RegionOf(v)]
				s.partitionShare[t.PartitionOf(e, v)] = share
				s.shareUnfinished[share]++
			}
		}
	}
}

func (s *Strategy) initRegions() {
	rs := s.regions
	n := rs.NumRegions()
	s.regionState = make([]RegionState, n)
	s.attempt = make([]Attempt, n)
	s.unsatisfied = make([]int32, n)
	s.unfinishedMembers = make([]int32, n)
	for r := range n {
		s.unsatisfied[r] = int32(len(rs.ConsumedGroups(region.ID(r))))
		s.unfinishedMembers[r] = int32(rs.Size(region.ID(r)))
	}
}

// Regions returns the regions the strategy schedules.
func (s *Strategy) Regions() *region.Regions { return s.regions }

// Started reports whether Start was called.
func (s *Strategy) Started() bool { return s.started }

// Finished reports whether every region is finished.
func (s *Strategy) Finished() bool { return s.finishedRegions == len(s.regionState) }

// Vertex returns the state and attempt of execution vertex v.
func (s *Strategy) Vertex(v topology.ExecutionVertexID) (VertexStatus, error) {
	if !s.validVertex(v) {
		return VertexStatus{}, &UnknownVertexError{Vertex: v}
	}
	return VertexStatus{State: s.vertexState[v], Attempt: s.attempt[s.regions.RegionOf(v)]}, nil
}

// Region returns the state, attempt and counters of region r.
func (s *Strategy) Region(r region.ID) (RegionStatus, error) {
	if !s.validRegion(r) {
		return RegionStatus{}, &UnknownRegionError{Region: r}
	}
	return RegionStatus{
		State:             s.regionState[r],
		Attempt:           s.attempt[r],
		UnsatisfiedInputs: int(s.unsatisfied[r]),
		UnfinishedMembers: int(s.unfinishedMembers[r]),
	}, nil
}

// BlockingPartitionsOf returns the blocking result partitions execution
// vertex v writes, one per blocking out-edge, ascending: what a runtime
// passes to RegionsToRestart as lost when the machine that ran v is gone.
func (s *Strategy) BlockingPartitionsOf(v topology.ExecutionVertexID) ([]topology.ResultPartitionID, error) {
	if !s.validVertex(v) {
		return nil, &UnknownVertexError{Vertex: v}
	}
	var out []topology.ResultPartitionID
	for _, e := range s.blockingOut[s.topo.JobVertexOf(v)] {
		out = append(out, s.topo.PartitionOf(e, v))
	}
	return out, nil
}

func (s *Strategy) validVertex(v topology.ExecutionVertexID) bool {
	return v >= 0 && int(v) < len(s.vertexState)
}

func (s *Strategy) validRegion(r region.ID) bool {
	return r >= 0 && int(r) < len(s.regionState)
}
