package strategy

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// DefaultSelectiveShare is the selective share of a Strategy made without
// WithSelectiveShare: a consumer of a selective hybrid result starts once
// half of the producers of each such input have finished.
const DefaultSelectiveShare = 0.5

// ErrInvalidShare means a selective share outside (0, 1].
var ErrInvalidShare = errors.New("strategy: invalid selective share")

// ShareError is a selective share outside (0, 1] (or not a number). It
// unwraps to ErrInvalidShare.
type ShareError struct {
	Share float64
}

// Error names the share and the valid range.
func (e *ShareError) Error() string {
	return fmt.Sprintf("%v %v: a share of the producers, more than 0 and at most 1 (default %v)", ErrInvalidShare, e.Share, DefaultSelectiveShare)
}

// Unwrap returns ErrInvalidShare.
func (e *ShareError) Unwrap() error { return ErrInvalidShare }

// ValidateSelectiveShare returns a *ShareError unless 0 < share <= 1: what a
// caller that reads the share from its input checks before handing it to
// WithSelectiveShare.
func ValidateSelectiveShare(share float64) error {
	if !(share > 0 && share <= 1) { // NaN fails both
		return &ShareError{Share: share}
	}
	return nil
}

// WithSelectiveShare sets the share of the producers of a selective hybrid
// input (exchange.HybridSelective) that must have finished before its
// consumer may start: with n producer partitions in the partition group a
// consumer reads, ceil(share*n) of them (at least one), and every other
// producer deployed. The default is DefaultSelectiveShare. A share outside
// (0, 1] (see ValidateSelectiveShare) leaves the default.
//
// What it models: Flink starts a selective hybrid consumer once some of
// its producers have finished (its PartialFinishedInputConsumableDecider
// asks for one finished partition): the consumer then finds that part of
// its input complete and persisted, and reads the rest live. A small
// share starts consumers early (more overlap, and slots held while they
// wait for data); 1 starts them when every producer finished, as a
// blocking exchange would, and then no consumer reads anything live, so
// its restart never restarts its producers (see RegionsToRestart).
func WithSelectiveShare(share float64) Option {
	return func(s *Strategy) {
		if ValidateSelectiveShare(share) == nil {
			s.selectiveShare = share
		}
	}
}

// hybridKind is the kind of a partition group in hybridState.
type hybridKind uint8

const (
	notHybrid hybridKind = iota
	hybridFull
	hybridSelective
)

// hybridState is what decides whether the consumers of a hybrid group may
// start. Consumer region c may read hybrid group g when every producer
// region of g but c itself is deployed (undeployed is 0, or 1 and the last
// one is c) and at most maxOpen partitions of g are unfinished (threshold).
// The regions' unsatisfied counters follow this predicate, changed by the
// events below in O(1) each, plus the consumers of a group when it
// changes for all of them. The group's partitions' finishes are counted in
// its groupState as those of a group of one producer region (count: its
// unfinished partitions), whatever its producer regions.
type hybridState struct {
	// undeployed counts the producer regions of the group not deployed
	// in their current attempt.
	undeployed int32
	// undeployedXor is, for a cross-region group, the xor of the
	// positions (in GroupProducerRegions) of the undeployed producer
	// regions, which names the last one when one is left.
	undeployedXor int32
	// maxOpen is how many partitions of the group may be unfinished
	// while its consumers may start: all of them for a full group; for a
	// selective one, all but the share that must have finished.
	maxOpen int32
	kind    hybridKind
}

// threshold reports whether enough partitions of hybrid group g finished.
func (s *Strategy) threshold(g topology.GroupID) bool {
	return s.group[g].count <= s.hybrid[g].maxOpen
}

// initHybrid sets up the hybrid state of the groups of hybrid edge e: the
// groups count their unfinished partitions (groupState of a group of one
// producer region, or of one partition), their producer regions all
// undeployed.
func (s *Strategy) initHybrid(e topology.JobEdgeID, selective bool) {
	rs, t := s.regions, s.topo
	if s.hybrid == nil {
		s.hybrid = zeroed(s.spare.hybrid, t.NumGroups())
	}
	job := t.Job()
	src, dst := job.EdgeEnds(e)
	s.hybridOut[src] = true
	s.hybridIn[dst] = append(s.hybridIn[dst], e)
	gs := t.GroupsOf(e)
	oneProducerEach := gs.Len() == t.VerticesOf(src).Len()
	for g := topology.GroupID(gs.Start); g < topology.GroupID(gs.End); g++ {
		producers := rs.GroupProducerRegions(g)
		k := int32(len(producers))
		consumers := int32(len(rs.GroupConsumerRegions(g)))
		n := int32(t.GroupOnEdge(e, g).Producers.Len())
		if oneProducerEach {
			s.group[g] = groupState{count: 1, pendingXor: onePartition, unfinishedConsumers: consumers}
		} else {
			if s.partitionState == nil {
				s.partitionState = zeroed(s.spare.partitionState, s.partitions)
			}
			s.group[g] = groupState{count: n, pendingXor: -1, unfinishedConsumers: consumers}
		}
		hs := hybridState{undeployed: k, maxOpen: n, kind: hybridFull}
		if rs.IsCrossRegion(g) {
			hs.undeployedXor = xorUpTo(k - 1)
		}
		if selective {
			hs.kind = hybridSelective
			need := int32(math.Ceil(s.selectiveShare * float64(n)))
			need = min(max(need, 1), n, n-s.largestOwnShare(e, g))
			hs.maxOpen = n - need
		}
		s.hybrid[g] = hs
	}
}

// largestOwnShare returns, for a cross-region group g of edge e, the most
// partitions of g that one of its consumer regions produces itself (0 for
// other groups): a consumer region cannot wait for its own partitions, so
// a selective share never asks for more than the others produce.
func (s *Strategy) largestOwnShare(e topology.JobEdgeID, g topology.GroupID) int32 {
	rs := s.regions
	if !rs.IsCrossRegion(g) {
		return 0
	}
	consumers := rs.GroupConsumerRegions(g)
	own := map[region.ID]int32{}
	largest := int32(0)
	pg := s.topo.GroupOnEdge(e, g)
	for v := pg.Producers.Start; v < pg.Producers.End; v++ {
		r := rs.RegionOf(topology.ExecutionVertexID(v))
		if _, found := slices.BinarySearch(consumers, r); found {
			own[r]++
			largest = max(largest, own[r])
		}
	}
	return largest
}

// regionDeployed records that region r's current attempt is deployed: the
// hybrid groups it writes have one undeployed producer region less, and a
// region that reads selective hybrid results not yet complete reads them
// live. Only a job with hybrid edges records it (s.hybrid not nil).
func (s *Strategy) regionDeployed(r region.ID) {
	rg := &s.region[r]
	rg.flags |= regionDeployed
	if s.anySelective {
		for _, g := range s.regions.ConsumedGroups(r) {
			if s.hybrid[g].kind == hybridSelective && s.group[g].count > 0 {
				if rg.flags&regionReadsLive == 0 {
					rg.flags |= regionReadsLive
					if s.readLive == nil {
						s.readLive = map[region.ID][]topology.GroupID{}
					}
					s.readLive[r] = s.readLive[r][:0]
				}
				s.readLive[r] = append(s.readLive[r], g)
			}
		}
	}
	if !s.producesHybrid(r) {
		return
	}
	for _, g := range s.regions.ProducedGroups(r) {
		if s.hybrid[g].kind != notHybrid {
			s.producerDeployed(g, r)
		}
	}
}

// regionUndeployed is the inverse of regionDeployed, for a restart.
func (s *Strategy) regionUndeployed(r region.ID) {
	rg := &s.region[r]
	if rg.flags&regionReadsLive != 0 {
		delete(s.readLive, r)
	}
	rg.flags &^= regionDeployed | regionReadsLive
	if s.hybrid == nil || !s.producesHybrid(r) {
		return
	}
	for _, g := range s.regions.ProducedGroups(r) {
		if s.hybrid[g].kind != notHybrid {
			s.producerUndeployed(g, r)
		}
	}
}

// producesHybrid reports whether region r has a member that writes a
// hybrid result: the job vertex of its first member does (the members of
// a region with several are glued by pipelined edges, and any of them may
// write one, so a region of several members is walked).
func (s *Strategy) producesHybrid(r region.ID) bool {
	if v, one := s.regions.OnlyMember(r); one {
		return s.hybridOut[s.topo.JobVertexOf(v)]
	}
	return true
}

// position returns the position of producer region r in g's list.
func (s *Strategy) position(g topology.GroupID, r region.ID) int32 {
	i, _ := slices.BinarySearch(s.regions.GroupProducerRegions(g), r)
	return int32(i)
}

// producerDeployed counts producer region r of hybrid group g as deployed.
// With one undeployed producer region left, that region may read g if it
// consumes g; with none left, every other consumer region may (r, if it
// consumes g, could already).
func (s *Strategy) producerDeployed(g topology.GroupID, r region.ID) {
	hs := &s.hybrid[g]
	hs.undeployed--
	cross := s.regions.IsCrossRegion(g)
	if cross {
		hs.undeployedXor ^= s.position(g, r)
	}
	if !s.threshold(g) {
		return
	}
	switch hs.undeployed {
	case 1:
		if cross {
			if last := s.regions.GroupProducerRegions(g)[hs.undeployedXor]; s.consumes(g, last) {
				s.satisfy(last)
			}
		}
	case 0:
		for _, c := range s.regions.GroupConsumerRegions(g) {
			if c != r {
				s.satisfy(c)
			}
		}
	}
}

// producerUndeployed is the inverse of producerDeployed.
func (s *Strategy) producerUndeployed(g topology.GroupID, r region.ID) {
	hs := &s.hybrid[g]
	hs.undeployed++
	cross := s.regions.IsCrossRegion(g)
	pos := int32(0)
	if cross {
		pos = s.position(g, r)
		hs.undeployedXor ^= pos
	}
	if !s.threshold(g) {
		return
	}
	switch hs.undeployed {
	case 1:
		for _, c := range s.regions.GroupConsumerRegions(g) {
			if c != r {
				s.region[c].unsatisfied++
			}
		}
	case 2:
		if cross {
			if before := s.regions.GroupProducerRegions(g)[hs.undeployedXor^pos]; s.consumes(g, before) {
				s.region[before].unsatisfied++
			}
		}
	}
}

// hybridPartitionFinished counts down partition p of hybrid group g. When
// that makes the group's finished partitions enough (selective), every
// consumer region whose producers are deployed may read it.
func (s *Strategy) hybridPartitionFinished(g topology.GroupID) {
	gs := &s.group[g]
	if gs.count--; gs.count != s.hybrid[g].maxOpen {
		return
	}
	s.forConsumable(g, s.satisfy)
}

// hybridPartitionReset is the inverse of hybridPartitionFinished.
func (s *Strategy) hybridPartitionReset(g topology.GroupID) {
	gs := &s.group[g]
	if gs.count++; gs.count != s.hybrid[g].maxOpen+1 {
		return
	}
	s.forConsumable(g, func(c region.ID) { s.region[c].unsatisfied++ })
}

// forConsumable calls f for every consumer region of hybrid group g whose
// producers are deployed (hybridConsumable but for the threshold). A
// group whose one producer region reads it too (a rescale inside a
// region that also feeds another) is not an input of that region (its
// ConsumedGroups leave it out), which is skipped.
func (s *Strategy) forConsumable(g topology.GroupID, f func(region.ID)) {
	hs := &s.hybrid[g]
	switch hs.undeployed {
	case 0:
		own := region.ID(-1)
		if producers := s.regions.GroupProducerRegions(g); len(producers) == 1 && !s.regions.IsCrossRegion(g) {
			own = producers[0]
		}
		for _, c := range s.regions.GroupConsumerRegions(g) {
			if c != own {
				f(c)
			}
		}
	case 1:
		if s.regions.IsCrossRegion(g) {
			if last := s.regions.GroupProducerRegions(g)[hs.undeployedXor]; s.consumes(g, last) {
				f(last)
			}
		}
	}
}

// CheckFinish returns the *EarlyFinishError a finish of vertex v would
// get now: it reads a hybrid result with a producer that has not
// finished. Nil otherwise, and for an id out of range. It changes
// nothing (a caller that acts on a finish before the strategy sees it,
// as speculative execution does, asks first).
func (s *Strategy) CheckFinish(v topology.ExecutionVertexID) error {
	if s.hybridIn == nil || !s.validVertex(v) {
		return nil
	}
	jv := s.topo.JobVertexOf(v)
	if len(s.hybridIn[jv]) == 0 {
		return nil
	}
	return s.checkHybridInputs(v, jv, int(int32(v)-s.topo.VerticesOf(jv).Start))
}

// checkHybridInputs returns an *EarlyFinishError if vertex v (subtask sub
// of job vertex jv) reads a hybrid group with an unfinished partition.
func (s *Strategy) checkHybridInputs(v topology.ExecutionVertexID, jv topology.JobVertexID, sub int) error {
	for _, e := range s.hybridIn[jv] {
		g := s.topo.ConsumedGroup(e, sub)
		if s.group[g].count == 0 {
			continue
		}
		pg := s.topo.GroupOnEdge(e, g)
		first := s.topo.PartitionOf(e, topology.ExecutionVertexID(pg.Producers.Start))
		producer := topology.ExecutionVertexID(pg.Producers.Start)
		for k := range int32(pg.Producers.Len()) {
			if s.partitionOf(g, first+topology.ResultPartitionID(k)) == partitionUnfinished {
				producer = topology.ExecutionVertexID(pg.Producers.Start + k)
				break
			}
		}
		return &EarlyFinishError{Vertex: v, Name: s.topo.VertexName(v), Producer: producer,
			ProducerName: s.topo.VertexName(producer), Exchange: s.topo.PartitionType(e)}
	}
	return nil
}

// EarlyFinishError is a finish reported for a task that reads a hybrid
// result with a producer that has not finished: the task cannot have read
// all of its input before the producer wrote all of it. It unwraps to
// ErrEarlyFinish. The report changes nothing; the runtime reports the
// producer's finish first, then the consumer's again.
type EarlyFinishError struct {
	// Vertex is the consumer whose finish was refused, Name its name
	// ("B#0").
	Vertex topology.ExecutionVertexID
	Name   string
	// Producer is a producer of a hybrid result Vertex reads that has
	// not finished, ProducerName its name ("A#1").
	Producer     topology.ExecutionVertexID
	ProducerName string
	// Exchange is the partition type of the edge between them
	// (exchange.HybridFull or exchange.HybridSelective).
	Exchange exchange.ResultPartitionType
}

// Error names the consumer, the producer and the exchange.
func (e *EarlyFinishError) Error() string {
	return fmt.Sprintf("%v: %s (id %d) reads %s (id %d) through a %s exchange, and %s has not finished; report its finish first",
		ErrEarlyFinish, e.Name, e.Vertex, e.ProducerName, e.Producer, e.Exchange, e.ProducerName)
}

// Unwrap returns ErrEarlyFinish.
func (e *EarlyFinishError) Unwrap() error { return ErrEarlyFinish }
