package strategy

import (
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Start schedules the source regions: those without a blocking input
// produced outside themselves, in ascending id order.
func (s *Strategy) Start() (Decisions, error) {
	if s.started {
		return Decisions{}, ErrAlreadyStarted
	}
	s.started = true
	for r := range s.region {
		if s.region[r].unsatisfied == 0 {
			s.ready = append(s.ready, region.ID(r))
		}
	}
	var d Decisions
	s.takeDecisions(&d)
	if ce := s.log.Check(zap.DebugLevel, "strategy started"); ce != nil {
		ce.Write(zap.Int("regions", len(s.region)), zap.Int("sourceRegions", len(d.Deploy)))
	}
	return d, nil
}

// UpdateState reports that execution vertex v, in attempt `attempt` of
// its region, reached state `to` (TaskDeploying, TaskRunning, TaskFinished, TaskFailed or
// TaskCanceled; see ExecutionState for the allowed transitions).
//
// A report whose attempt is older than the region's current attempt is a
// leftover of a run a Restart superseded (say a late "finished" of a
// canceled task): it is ignored, changes nothing, and returns an
// *AttemptError that unwraps to ErrStaleAttempt. Invalid reports return
// *UnknownVertexError, *AttemptError (ErrUnknownAttempt) or
// *TransitionError and change nothing either.
//
// TaskFinished completes v's blocking and hybrid partitions: consumer
// regions whose inputs are now all consumable are returned in
// Decisions.Deploy, and partitions no longer needed in Decisions.Release.
// The first report of TaskDeploying, TaskRunning or TaskFinished of a
// member of a region deploys the region (as MarkDeploying does): the
// consumer regions of its hybrid results that may now start are returned
// too. TaskFailed records the failure only: the runtime then asks
// RegionsToRestart and calls Restart.
//
// A finish of a vertex that reads a hybrid result with a producer not
// finished yet is refused with an *EarlyFinishError (ErrEarlyFinish) and
// changes nothing: a consumer cannot have read all of its input before
// its producers wrote all of it, so a runtime reports a hybrid producer's
// finish before its consumers' (one that learns of both through different
// channels orders them, or reports the consumer's again after).
func (s *Strategy) UpdateState(v topology.ExecutionVertexID, attempt Attempt, to ExecutionState) (d Decisions, err error) {
	err = s.UpdateStateInto(&d, v, attempt, to)
	return d, err
}

// UpdateStateInto is UpdateState filling in d (empty on entry), which it
// leaves empty on an error: the form for a caller that hands the
// decisions on by reference, without copying them out of the result.
func (s *Strategy) UpdateStateInto(d *Decisions, v topology.ExecutionVertexID, attempt Attempt, to ExecutionState) error {
	if !s.started {
		return ErrNotStarted
	}
	if !s.validVertex(v) {
		return &UnknownVertexError{Vertex: v}
	}
	r := s.regions.RegionOf(v)
	if current := s.region[r].attempt; attempt != current {
		err := &AttemptError{Vertex: v, Name: s.topo.VertexName(v), State: to, Attempt: attempt, Current: current}
		if ce := s.log.Check(zap.DebugLevel, "ignoring state report"); ce != nil {
			ce.Write(zap.Error(err))
		}
		return err
	}
	st := s.taskState(v, r)
	from := *st
	if !s.canReport(from, to) {
		return &TransitionError{Vertex: v, Name: s.topo.VertexName(v), From: from, To: to}
	}
	if to == TaskFinished && s.hybridIn != nil {
		if err := s.CheckFinish(v); err != nil {
			return err
		}
	}
	*st = to
	if to == TaskFailed || to == TaskCanceled {
		return nil
	}
	if s.hybrid != nil && s.region[r].flags&regionDeployed == 0 {
		s.regionDeployed(r) // only hybrid results care whether a region is deployed
	}
	if to == TaskFinished {
		s.vertexFinished(v, r)
	}
	s.takeDecisions(d)
	return nil
}

// MarkDeploying reports that the runtime deploys region r's current
// attempt: every member still TaskScheduled becomes TaskDeploying, as
// UpdateState(v, attempt, TaskDeploying) would make it, in one call for a
// runtime that deploys a region's members together (package scheduler
// does, once the region's slots are there). It returns how many members
// it changed (a member in another state, canceled say, is left as it is)
// and the decisions: the consumer regions of r's hybrid results that may
// start now that r is deployed.
//
// Errors: ErrNotStarted before Start; *UnknownRegionError for r out of
// range. Nothing changes then.
func (s *Strategy) MarkDeploying(r region.ID) (changed int, d Decisions, err error) {
	changed, err = s.MarkDeployingInto(&d, r)
	return changed, d, err
}

// MarkDeployingInto is MarkDeploying filling in d (empty on entry), which
// it leaves empty on an error.
func (s *Strategy) MarkDeployingInto(d *Decisions, r region.ID) (changed int, err error) {
	if !s.started {
		return 0, ErrNotStarted
	}
	if !s.validRegion(r) {
		return 0, &UnknownRegionError{Region: r}
	}
	rg := &s.region[r]
	if rg.single { // most regions of a blocking job
		if rg.member == TaskScheduled {
			rg.member = TaskDeploying
			changed = 1
		}
	} else {
		for _, v := range s.regions.Members(r) {
			if s.vertexState[v] == TaskScheduled {
				s.vertexState[v] = TaskDeploying
				changed++
			}
		}
	}
	if changed > 0 && s.hybrid != nil && rg.flags&regionDeployed == 0 {
		s.regionDeployed(r)
		s.takeDecisions(d)
	}
	return changed, nil
}

// vertexFinished completes v's blocking and hybrid partitions, then v's
// region when v was its last unfinished member.
func (s *Strategy) vertexFinished(v topology.ExecutionVertexID, r region.ID) {
	jv := s.topo.JobVertexOf(v)
	subtask := int(int32(v) - s.topo.VerticesOf(jv).Start)
	for _, e := range s.blockingOut[jv] {
		p := s.topo.PartitionOf(e, v)
		g := s.topo.ProducedGroup(e, subtask)
		s.setPartition(g, p, partitionFinished)
		if s.hybrid != nil && s.hybrid[g].kind != notHybrid {
			s.hybridPartitionFinished(g)
		} else {
			s.partitionFinished(e, g, p, r)
		}
		s.releaseIfUnneeded(g, p)
	}
	rg := &s.region[r]
	if rg.unfinished--; rg.unfinished != 0 {
		return
	}
	if !rg.single {
		s.regionFinished(r)
		return
	}
	// A region of one member reads one group per blocking in-edge of its
	// member, which the topology computes: AllConsumedGroups(r) in a
	// record less (the same groups, in the same order).
	s.markFinished(r)
	for _, e := range s.blockingIn[jv] {
		s.consumerFinished(s.topo.ConsumedGroup(e, subtask))
	}
}

// partitionFinished counts down partition p of group g (of edge e),
// written by region r. When p was the last unfinished partition of r in g, one
// producer region less is pending: with one left, that region is
// satisfied if it consumes g; with none left, every other consumer region
// is (r, if it consumes g, was satisfied already).
func (s *Strategy) partitionFinished(e topology.JobEdgeID, g topology.GroupID, p topology.ResultPartitionID, r region.ID) {
	gs := &s.group[g]
	if gs.single() {
		if gs.count--; gs.count == 0 {
			s.groupDone(e, g, r)
		}
		return
	}
	pos := s.partitionPos[p]
	share := s.regions.GroupProducerBase(g) + pos
	if s.shareUnfinished[share]--; s.shareUnfinished[share] > 0 {
		return
	}
	gs.count--
	gs.pendingXor ^= pos
	switch gs.count {
	case 1:
		if last := s.regions.GroupProducerRegions(g)[gs.pendingXor]; s.consumes(g, last) {
			s.satisfy(last)
		}
	case 0:
		s.groupDone(e, g, r)
	}
}

// groupDone satisfies every consumer region of group g (of edge e) but r,
// whose partitions of g finished last. A group read by one subtask (every
// group of a forward edge) has that subtask's region as its one consumer
// region, which the topology computes: GroupConsumerRegions(g) in a
// record less.
func (s *Strategy) groupDone(e topology.JobEdgeID, g topology.GroupID, r region.ID) {
	if cs := s.topo.GroupOnEdge(e, g).Consumers; cs.Len() == 1 {
		if c := s.regions.RegionOf(topology.ExecutionVertexID(cs.Start)); c != r {
			s.satisfy(c)
		}
		return
	}
	for _, c := range s.regions.GroupConsumerRegions(g) {
		if c != r {
			s.satisfy(c)
		}
	}
}

// satisfy counts down the unsatisfied inputs of region c; a waiting
// region with none left becomes ready.
func (s *Strategy) satisfy(c region.ID) {
	rg := &s.region[c]
	if rg.unsatisfied--; rg.unsatisfied == 0 && rg.state == RegionWaiting {
		s.ready = append(s.ready, c)
	}
}

// schedule hands region r out for deployment.
func (s *Strategy) schedule(r region.ID) {
	rg := &s.region[r]
	rg.state = RegionScheduled
	if rg.single { // most regions of a blocking job
		rg.member = TaskScheduled
	} else {
		for _, v := range s.regions.Members(r) {
			s.vertexState[v] = TaskScheduled
		}
	}
	if !s.debug {
		return
	}
	if ce := s.log.Check(zap.DebugLevel, "schedule region"); ce != nil {
		ce.Write(zap.Int32("region", int32(r)), zap.Int32("attempt", int32(s.region[r].attempt)), zap.Int("members", s.regions.Size(r)))
	}
}
