package strategy

import (
	"slices"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// RegionsToRestart returns, ascending, the regions to restart when
// execution vertex `failed` fails (Flink's
// RestartPipelinedRegionFailoverStrategy): failed's region; the producer
// region of every partition a restarted region reads that is unavailable,
// meaning listed in lost (say, the partitions of a lost machine, see
// BlockingPartitionsOf) or already released by this strategy; and every
// consumer region of a restarted region; all transitively.
//
// Hybrid results: the consumer regions of a restarted producer region are
// restarted as for blocking ones, and those deployed are reading from it
// live, so their tasks are canceled with it. A restarted region that read
// a selective hybrid result live (it was deployed while a partition of
// that group was unfinished) restarts the group's producer regions too:
// selective spilling persisted only what was not read in time, so the
// group's complete data exists nowhere. A full hybrid result is persisted
// whole: its consumer restarts alone and reads it again.
//
// It is a query: it changes no scheduling state. The runtime cancels the
// tasks of these regions, then calls Restart with them. Visited marks on
// regions and on groups (once as an input, once as an output) make the
// walk linear in the regions and groups it reaches; the partitions of a
// reached input group are scanned only if the group has a released or a
// lost partition.
func (s *Strategy) RegionsToRestart(failed topology.ExecutionVertexID, lost ...topology.ResultPartitionID) ([]region.ID, error) {
	if !s.validVertex(failed) {
		return nil, &UnknownVertexError{Vertex: failed}
	}
	for _, p := range lost {
		if p < 0 || int(p) >= s.partitions {
			return nil, &UnknownPartitionError{Partition: p}
		}
	}
	w := &s.walk
	if w.regionSeen == nil {
		*w = newFailoverScratch(len(s.region), len(s.group), s.partitions)
	}
	mark := w.begin()
	for _, p := range lost {
		w.partitionLost[p] = mark
		w.groupLost[s.topo.PartitionGroupOf(p)] = mark
	}
	restart := []region.ID{s.regions.RegionOf(failed)}
	w.regionSeen[restart[0]] = mark
	visit := func(r region.ID) {
		if w.regionSeen[r] != mark {
			w.regionSeen[r] = mark
			restart = append(restart, r)
		}
	}
	for i := 0; i < len(restart); i++ {
		r := restart[i]
		if s.region[r].flags&regionReadsLive != 0 {
			s.restartLiveProducers(r, mark, visit)
		}
		for _, g := range s.regions.ConsumedGroups(r) {
			if w.inputSeen[g] == mark {
				continue
			}
			w.inputSeen[g] = mark
			if s.group[g].released == 0 && w.groupLost[g] != mark {
				continue
			}
			pg := s.topo.Group(g)
			first := s.topo.PartitionOf(pg.Edge, topology.ExecutionVertexID(pg.Producers.Start))
			for k := range int32(pg.Producers.Len()) {
				p := first + topology.ResultPartitionID(k)
				if s.partitionOf(g, p) == partitionReleased || w.partitionLost[p] == mark {
					visit(s.regions.RegionOf(topology.ExecutionVertexID(pg.Producers.Start + k)))
				}
			}
		}
		for _, g := range s.regions.ProducedGroups(r) {
			if w.outputSeen[g] == mark {
				continue
			}
			w.outputSeen[g] = mark
			for _, c := range s.regions.GroupConsumerRegions(g) {
				visit(c)
			}
		}
	}
	if !slices.IsSorted(restart) {
		slices.Sort(restart)
	}
	if ce := s.log.Check(zap.DebugLevel, "regions to restart"); ce != nil {
		ce.Write(zap.String("failed", s.topo.VertexName(failed)), zap.Int("lost", len(lost)), zap.Int("regions", len(restart)))
	}
	return restart, nil
}

// Restart resets the given regions (normally the result of
// RegionsToRestart, after the runtime canceled their tasks) to a new
// attempt: every member goes back to TaskCreated, partitions they had finished
// count as unfinished again (consumer regions wait for them anew), and
// from now on reports of the previous attempt are stale. Regions whose
// blocking inputs are all finished are returned in Decisions.Deploy at
// once, ascending; the others when their inputs finish again.
//
// Duplicates are ignored. Restart does not wait for the old tasks: the
// runtime must have canceled them. An unknown region id returns an
// *UnknownRegionError and restarts nothing.
func (s *Strategy) Restart(regions []region.ID) (Decisions, error) {
	if !s.started {
		return Decisions{}, ErrNotStarted
	}
	for _, r := range regions {
		if !s.validRegion(r) {
			return Decisions{}, &UnknownRegionError{Region: r}
		}
	}
	set := slices.Clone(regions)
	if !slices.IsSorted(set) {
		slices.Sort(set)
	}
	set = slices.Compact(set)
	for _, r := range set {
		s.resetRegion(r)
	}
	for _, r := range set {
		if s.region[r].unsatisfied == 0 {
			s.ready = append(s.ready, r)
		}
	}
	if ce := s.log.Check(zap.InfoLevel, "restart regions"); ce != nil {
		ce.Write(zap.Int("regions", len(set)), zap.Int("readyAtOnce", len(s.ready)))
	}
	var d Decisions
	s.takeDecisions(&d)
	return d, nil
}

// resetRegion starts a new attempt of region r.
func (s *Strategy) resetRegion(r region.ID) {
	rg := &s.region[r]
	rg.attempt++
	if rg.state == RegionFinished {
		s.finishedRegions--
		for _, g := range s.regions.AllConsumedGroups(r) {
			s.group[g].unfinishedConsumers++
		}
	}
	rg.state = RegionWaiting
	if rg.flags&regionDeployed != 0 {
		s.regionUndeployed(r)
	}
	members := s.regions.Members(r)
	for _, v := range members {
		st := s.taskState(v, r)
		if *st == TaskFinished {
			s.vertexReset(v, r)
		}
		*st = TaskCreated
	}
	rg.unfinished = int32(len(members))
}

// vertexReset makes the blocking and hybrid partitions of finished vertex
// v, of region r, unfinished again.
func (s *Strategy) vertexReset(v topology.ExecutionVertexID, r region.ID) {
	jv := s.topo.JobVertexOf(v)
	subtask := int(int32(v) - s.topo.VerticesOf(jv).Start)
	for _, e := range s.blockingOut[jv] {
		p := s.topo.PartitionOf(e, v)
		g := s.topo.ProducedGroup(e, subtask)
		if s.partitionOf(g, p) == partitionReleased {
			s.group[g].released--
		}
		s.setPartition(g, p, partitionUnfinished)
		if s.hybrid != nil && s.hybrid[g].kind != notHybrid {
			s.hybridPartitionReset(g)
		} else {
			s.partitionReset(g, p, r)
		}
	}
}

// partitionReset is the inverse of partitionFinished (p is written by
// region r). When r becomes pending in g: if it is the only pending one,
// every other consumer region loses g (r itself, if it consumes g, waits
// only for others); if it is the second, the one pending before loses g.
func (s *Strategy) partitionReset(g topology.GroupID, p topology.ResultPartitionID, r region.ID) {
	gs := &s.group[g]
	if gs.single() {
		if gs.count++; gs.count == 1 {
			s.groupUndone(g, r)
		}
		return
	}
	pos := s.partitionPos[p]
	share := s.regions.GroupProducerBase(g) + pos
	if s.shareUnfinished[share]++; s.shareUnfinished[share] > 1 {
		return
	}
	gs.count++
	gs.pendingXor ^= pos
	switch gs.count {
	case 1:
		s.groupUndone(g, r)
	case 2:
		if before := s.regions.GroupProducerRegions(g)[gs.pendingXor^pos]; s.consumes(g, before) {
			s.region[before].unsatisfied++
		}
	}
}

// groupUndone is the inverse of groupDone: every consumer region of
// group g but r, whose partition of g is unfinished again, loses g.
func (s *Strategy) groupUndone(g topology.GroupID, r region.ID) {
	for _, c := range s.regions.GroupConsumerRegions(g) {
		if c != r {
			s.region[c].unsatisfied++
		}
	}
}

// restartLiveProducers visits the producer regions of every selective
// hybrid group region r read live (Strategy.readLive): what of them it
// read is gone. The groups it read complete were persisted whole.
func (s *Strategy) restartLiveProducers(r region.ID, mark uint32, visit func(region.ID)) {
	w := &s.walk
	if w.liveSeen == nil {
		w.liveSeen = make([]uint32, len(s.group))
	}
	for _, g := range s.readLive[r] {
		if w.liveSeen[g] == mark {
			continue
		}
		w.liveSeen[g] = mark
		for _, p := range s.regions.GroupProducerRegions(g) {
			visit(p)
		}
	}
}

// failoverScratch holds the visited marks of RegionsToRestart. A walk
// stamps with a fresh mark, so nothing is cleared between walks and a walk
// costs only what it reaches.
type failoverScratch struct {
	mark          uint32
	regionSeen    []uint32 // per region
	inputSeen     []uint32 // per group, reached as an input
	outputSeen    []uint32 // per group, reached as an output
	groupLost     []uint32 // per group, has a partition listed as lost
	partitionLost []uint32 // per partition, listed as lost
	liveSeen      []uint32 // per group, its producers visited for a consumer that read it live (nil until then)
}

func newFailoverScratch(regions, groups, partitions int) failoverScratch {
	return failoverScratch{
		regionSeen:    make([]uint32, regions),
		inputSeen:     make([]uint32, groups),
		outputSeen:    make([]uint32, groups),
		groupLost:     make([]uint32, groups),
		partitionLost: make([]uint32, partitions),
	}
}

// begin returns a mark no array holds yet.
func (w *failoverScratch) begin() uint32 {
	w.mark++
	if w.mark == 0 { // wrapped around: forget every old mark
		for _, a := range [][]uint32{w.regionSeen, w.inputSeen, w.outputSeen, w.groupLost, w.partitionLost, w.liveSeen} {
			clear(a)
		}
		w.mark = 1
	}
	return w.mark
}
