package strategy

import (
	"slices"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/exchange"
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
//     the part of g one producer region writes; the shares of g are
//     numbered as g's producer regions in Regions.GroupProducerBase, and
//     the only share of a group of one producer region, the usual case
//     of pointwise edges, is counted in the group's own state); the
//     number of shares with an unfinished partition (groupState.count)
//     and the xor of their positions, which names the last one when one is
//     left;
//   - per region, the number of consumed groups not yet satisfied, where
//     consumer c is satisfied on g when every partition of g produced
//     outside c is finished, i.e. no share is pending, or one is and its
//     producer region is c itself (cross-region groups, FLINK-22017);
//   - per group, the number of consumer regions not finished (release).
//
// A finish changes one share counter per produced partition and touches a
// group's consumer list only when the group completes, so every event
// costs O(1) amortized plus the regions it schedules. What one event
// reads of a region or of a group sits in one small struct (regionState,
// groupState), so it costs one cache miss, not one per counter: the state
// of the task of a region of one member is in its regionState, that of
// the partition of a group of one partition is told by the group's
// counters, and what the topology computes (the input groups of a
// one-member region, the one consumer of a group read by one subtask) is
// not read from the Regions' lists. Tasks end out of order, so every
// record an event touches is likely a miss.
type Strategy struct {
	regions *region.Regions
	topo    *topology.ExecutionTopology
	log     *zap.Logger
	debug   bool // log takes debug entries (read once, in New)
	started bool

	// per job vertex: its blocking and hybrid out-edges and in-edges,
	// ascending.
	blockingOut, blockingIn [][]topology.JobEdgeID
	// per job vertex: its hybrid in-edges, ascending, and whether it
	// writes a hybrid result; nil without hybrid edges.
	hybridIn  [][]topology.JobEdgeID
	hybridOut []bool

	// per execution vertex: its state, unless its region has one member
	// (regionState.member); nil when every region has one.
	vertexState []ExecutionState
	vertices    int // execution vertices

	// per region.
	region          []regionState
	finishedRegions int

	// per partition group; all zero for pipelined groups.
	group []groupState
	// per partition group: what decides whether its consumers may start,
	// for a hybrid group (see hybridState); nil without hybrid edges.
	hybrid       []hybridState
	anySelective bool // a hybrid edge is selective
	// readLive lists, for each region deployed while selective hybrid
	// groups it reads had unfinished partitions (regionReadsLive), those
	// groups: a failover restarts their producers, not those of the
	// groups it read complete (nil until a region reads one live).
	readLive       map[region.ID][]topology.GroupID
	selectiveShare float64 // WithSelectiveShare

	// per share (see Strategy) of a group of several producer regions: its
	// unfinished partitions; nil when every blocking group has one
	// producer region.
	shareUnfinished []int32

	// per result partition: its state, unless its group has one
	// partition (see partitionOf); only blocking partitions are used;
	// nil when every blocking group has one partition.
	partitionState []partitionState
	partitions     int // result partitions
	// partitionPos is the position of the partition's producer region in
	// its group's producer list; nil when every blocking group has one
	// producer region (the position is 0).
	partitionPos []int32

	// output of the event being handled, drained by takeDecisions; the
	// lists of the Decisions it returns are release and deploy, emptied
	// by the next call (the caller's until then).
	ready   []region.ID
	release []topology.ResultPartitionID
	deploy  []Deployment

	// deployedReports: a vertex reports running, finished or failed only
	// once deploying (WithDeployedReports).
	deployedReports bool

	walk failoverScratch // allocated by the first RegionsToRestart

	// spare is, while New runs, the strategy whose tables it takes
	// (WithSpare); never kept.
	spare *Strategy
}

// regionState is the scheduling state of one region.
type regionState struct {
	attempt     Attempt
	unsatisfied int32 // consumed groups not satisfied (see Strategy)
	unfinished  int32 // members not finished in this attempt
	state       RegionState
	// single: the region has one member, whose state is member, not in
	// Strategy.vertexState. Most regions of a blocking job have one, and
	// every event of its task reads this record anyway: one cache line
	// per event, not two, when tasks end out of order.
	single bool
	member ExecutionState
	flags  regionFlags
}

// regionFlags are what a region's current attempt did so far.
type regionFlags uint8

const (
	// regionDeployed: a member was reported deploying, running or
	// finished (or MarkDeploying was called): the region's slots are
	// there, and its hybrid results may be read. Kept only in a job with
	// hybrid edges.
	regionDeployed regionFlags = 1 << iota
	// regionReadsLive: when it was deployed, a selective hybrid group it
	// reads had unfinished partitions, so it reads part of them live
	// (which ones: Strategy.readLive).
	regionReadsLive
)

// taskState returns where the state of vertex v, a member of region r,
// is kept.
func (s *Strategy) taskState(v topology.ExecutionVertexID, r region.ID) *ExecutionState {
	if rg := &s.region[r]; rg.single {
		return &rg.member
	}
	return &s.vertexState[v]
}

// groupState counts one blocking partition group's producers and
// consumers.
type groupState struct {
	// count is, for a group of several producer regions, the number of
	// its shares with an unfinished partition (the pending ones, each
	// counted in Strategy.shareUnfinished); for a group of one, the
	// unfinished partitions of its one share (pending while positive).
	count int32
	// pendingXor is the xor of the positions of the pending shares of a
	// group of several producer regions; -1 marks a group of one producer
	// region, onePartition one of one producer vertex (one partition).
	pendingXor          int32
	unfinishedConsumers int32 // consumer regions not finished
	released            int32 // partitions released
}

// onePartition is groupState.pendingXor of a group of one partition.
const onePartition = -2

// single reports whether the group has one producer region.
func (gs *groupState) single() bool { return gs.pendingXor < 0 }

// partitionOf returns the state of partition p of group g. The state of
// the partition of a group of one partition (every group of a forward
// edge) is not kept in Strategy.partitionState: the group's counters,
// which its events read anyway, say it (released if one is released,
// else finished if none is unfinished).
func (s *Strategy) partitionOf(g topology.GroupID, p topology.ResultPartitionID) partitionState {
	gs := &s.group[g]
	if gs.pendingXor != onePartition {
		return s.partitionState[p]
	}
	switch {
	case gs.released > 0:
		return partitionReleased
	case gs.count == 0:
		return partitionFinished
	}
	return partitionUnfinished
}

// setPartition records state st of partition p of group g; the counters
// of a group of one partition, changed beside, record it already.
func (s *Strategy) setPartition(g topology.GroupID, p topology.ResultPartitionID, st partitionState) {
	if s.group[g].pendingXor != onePartition {
		s.partitionState[p] = st
	}
}

// xorUpTo returns 0 ^ 1 ^ ... ^ n (0 for n < 0).
func xorUpTo(n int32) int32 {
	switch {
	case n < 0:
		return 0
	case n%4 == 0:
		return n
	case n%4 == 1:
		return 1
	case n%4 == 2:
		return n + 1
	default:
		return 0
	}
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithLogger makes the strategy log to l (decisions at debug level,
// restarts at info level); nil keeps the default, zap.NewNop(). The
// global logger is never used. Whether l takes debug entries is read once,
// by New, for the entries of scheduling a region and releasing
// partitions, which come with every finish: they cost a flag test, not a
// level check, and do not follow a level changed later (the others do).
func WithLogger(l *zap.Logger) Option {
	return func(s *Strategy) {
		if l != nil {
			s.log = l
		}
	}
}

// WithDeployedReports makes UpdateState refuse, with a *TransitionError,
// a report of TaskRunning, TaskFinished or TaskFailed for a vertex that is
// still TaskScheduled: for a runtime that reports TaskDeploying for every
// task it deploys (package scheduler does), such a report is of a task
// never deployed, whose region still waits for slots. By default they are
// accepted (a runtime may skip TaskDeploying).
func WithDeployedReports() Option {
	return func(s *Strategy) { s.deployedReports = true }
}

// WithSpare makes New take its per-vertex, per-group, per-partition and
// per-region tables from old, a strategy no longer used, where they have
// room, zeroed and then filled as new ones are, and the storage of its
// output lists, emptied: a caller that runs one
// job after another (the simulator, run after run) allocates them once.
// old must not be used after, nor be the strategy of anything still
// running.
func WithSpare(old *Strategy) Option {
	return func(s *Strategy) { s.spare = old }
}

// zeroed returns n zero values in old's storage if it has room for them,
// else in new storage.
func zeroed[T any](old []T, n int) []T {
	if cap(old) < n {
		return make([]T, n)
	}
	old = old[:n]
	clear(old)
	return old
}

// New returns the strategy for the regions rs (not nil), every region
// waiting and every vertex TaskCreated. Nothing is scheduled before Start.
// Cost O(subtasks + partitions + regions + the groups' region lists).
func New(rs *region.Regions, opts ...Option) *Strategy {
	s := &Strategy{regions: rs, topo: rs.Topology(), log: zap.NewNop(), selectiveShare: DefaultSelectiveShare}
	for _, o := range opts {
		o(s)
	}
	s.debug = s.log.Core().Enabled(zap.DebugLevel)
	if s.spare == nil {
		s.spare = &Strategy{}
	}
	s.initVertices()
	s.initGroups()
	s.initRegions()
	// The output lists hold ids only: emptied, they keep nothing alive.
	s.ready, s.release, s.deploy = s.spare.ready[:0], s.spare.release[:0], s.spare.deploy[:0]
	s.spare = nil
	return s
}

func (s *Strategy) initVertices() {
	job := s.topo.Job()
	s.blockingOut = make([][]topology.JobEdgeID, job.NumVertices())
	s.blockingIn = make([][]topology.JobEdgeID, job.NumVertices())
	for e := range topology.JobEdgeID(job.NumEdges()) {
		if pt := s.topo.PartitionType(e); !pt.IsPipelined() {
			src, dst := job.EdgeEnds(e)
			s.blockingOut[src] = append(s.blockingOut[src], e)
			s.blockingIn[dst] = append(s.blockingIn[dst], e)
			if pt.IsHybrid() && s.hybridIn == nil {
				s.hybridIn = make([][]topology.JobEdgeID, job.NumVertices())
				s.hybridOut = make([]bool, job.NumVertices())
			}
		}
	}
	s.vertices = s.topo.NumExecutionVertices()
	if s.regions.NumRegions() < s.vertices { // a region of several members
		s.vertexState = zeroed(s.spare.vertexState, s.vertices)
	}
}

// initGroups sets up the shares of every blocking group, all unfinished,
// in one pass over the blocking groups and their producers, and the
// hybrid groups (initHybrid).
func (s *Strategy) initGroups() {
	rs, t := s.regions, s.topo
	groups := t.NumGroups()
	s.group = zeroed(s.spare.group, groups)
	s.partitions = t.NumPartitions()

	job := t.Job()
	for e := range topology.JobEdgeID(job.NumEdges()) {
		pt := t.PartitionType(e)
		if pt.IsPipelined() {
			continue
		}
		if pt.IsHybrid() {
			selective := pt == exchange.HybridSelective
			s.anySelective = s.anySelective || selective
			s.initHybrid(e, selective)
			continue
		}
		gs := t.GroupsOf(e)
		// The groups of an edge split its producers: as many groups as
		// producers (a forward edge, or a pointwise one that fans out)
		// is one producer each, with no group to look up.
		src, _ := job.EdgeEnds(e)
		oneProducerEach := gs.Len() == t.VerticesOf(src).Len()
		for g := topology.GroupID(gs.Start); g < topology.GroupID(gs.End); g++ {
			producers := rs.GroupProducerRegions(g)
			k := int32(len(producers))
			consumers := int32(len(rs.GroupConsumerRegions(g)))
			if k == 1 && oneProducerEach {
				s.group[g] = groupState{count: 1, pendingXor: onePartition, unfinishedConsumers: consumers}
				continue
			}
			if s.partitionState == nil {
				s.partitionState = zeroed(s.spare.partitionState, s.partitions)
			}
			if k == 1 {
				count := int32(t.GroupOnEdge(e, g).Producers.Len())
				s.group[g] = groupState{count: count, pendingXor: -1, unfinishedConsumers: consumers}
				continue
			}
			pg := t.GroupOnEdge(e, g)
			s.group[g] = groupState{count: k, pendingXor: xorUpTo(k - 1), unfinishedConsumers: consumers}
			base := rs.GroupProducerBase(g)
			if s.partitionPos == nil {
				s.partitionPos = zeroed(s.spare.partitionPos, t.NumPartitions())
				s.shareUnfinished = zeroed(s.spare.shareUnfinished, int(rs.GroupProducerBase(topology.GroupID(groups))))
			}
			// The position of each producer's region in the sorted list:
			// producers in id order usually meet their regions in order,
			// so a cursor finds it; a binary search otherwise.
			next := int32(0)
			for v := topology.ExecutionVertexID(pg.Producers.Start); v < topology.ExecutionVertexID(pg.Producers.End); v++ {
				r := rs.RegionOf(v)
				var pos int32
				switch {
				case next < k && producers[next] == r:
					pos = next
					next++
				case next > 0 && producers[next-1] == r:
					pos = next - 1
				default:
					i, _ := slices.BinarySearch(producers, r)
					pos, next = int32(i), int32(i)+1
				}
				s.partitionPos[t.PartitionOf(e, v)] = pos
				s.shareUnfinished[base+pos]++
			}
		}
	}
}

func (s *Strategy) initRegions() {
	rs := s.regions
	n := rs.NumRegions()
	s.region = zeroed(s.spare.region, n)
	for r := range n {
		size := rs.Size(region.ID(r))
		s.region[r] = regionState{
			unsatisfied: int32(len(rs.ConsumedGroups(region.ID(r)))),
			unfinished:  int32(size),
			single:      size == 1,
		}
	}
}

// consumes reports whether region r, a producer region of group g, also
// consumes g. Only a cross-region group has such a producer among several.
func (s *Strategy) consumes(g topology.GroupID, r region.ID) bool {
	if !s.regions.IsCrossRegion(g) {
		return false
	}
	_, found := slices.BinarySearch(s.regions.GroupConsumerRegions(g), r)
	return found
}

// Regions returns the regions the strategy schedules.
func (s *Strategy) Regions() *region.Regions { return s.regions }

// Started reports whether Start was called.
func (s *Strategy) Started() bool { return s.started }

// Finished reports whether every region is finished.
func (s *Strategy) Finished() bool { return s.finishedRegions == len(s.region) }

// Vertex returns the state and attempt of execution vertex v.
func (s *Strategy) Vertex(v topology.ExecutionVertexID) (VertexStatus, error) {
	if !s.validVertex(v) {
		return VertexStatus{}, &UnknownVertexError{Vertex: v}
	}
	r := s.regions.RegionOf(v)
	return VertexStatus{State: *s.taskState(v, r), Attempt: s.region[r].attempt}, nil
}

// Region returns the state, attempt and counters of region r.
func (s *Strategy) Region(r region.ID) (RegionStatus, error) {
	if !s.validRegion(r) {
		return RegionStatus{}, &UnknownRegionError{Region: r}
	}
	rg := &s.region[r]
	return RegionStatus{
		State:             rg.state,
		Attempt:           rg.attempt,
		UnsatisfiedInputs: int(rg.unsatisfied),
		UnfinishedMembers: int(rg.unfinished),
	}, nil
}

// Attempt returns the current attempt of region r (0 for an id out of
// range): Region(r).Attempt alone, for a caller that reads it on every
// event (package scheduler keeps no copy).
func (s *Strategy) Attempt(r region.ID) Attempt {
	if !s.validRegion(r) {
		return 0
	}
	return s.region[r].attempt
}

// BlockingPartitionsOf returns the blocking and hybrid result partitions
// execution vertex v writes, one per such out-edge, ascending: what a
// runtime passes to RegionsToRestart as lost when the machine that ran v
// is gone.
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
	return v >= 0 && int(v) < s.vertices
}

func (s *Strategy) validRegion(r region.ID) bool {
	return r >= 0 && int(r) < len(s.region)
}
