package strategy

import (
	"go.uber.org/zap"

	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// regionFinished marks region r finished and counts it off every blocking
// group it reads; once every consumer region of a group has finished, its
// finished partitions are released.
func (s *Strategy) regionFinished(r region.ID) {
	s.markFinished(r)
	for _, g := range s.regions.AllConsumedGroups(r) {
		s.consumerFinished(g)
	}
}

// markFinished marks region r finished.
func (s *Strategy) markFinished(r region.ID) {
	s.region[r].state = RegionFinished
	s.finishedRegions++
}

// consumerFinished counts a finished consumer region off blocking group
// g; after the last one, g's finished partitions are released.
func (s *Strategy) consumerFinished(g topology.GroupID) {
	gs := &s.group[g]
	if gs.unfinishedConsumers--; gs.unfinishedConsumers == 0 {
		s.releaseFinishedPartitions(g)
	}
}

// releaseFinishedPartitions releases every finished partition of group g,
// whose consumer regions have all finished; partitions that finish later
// are released as they finish (releaseIfUnneeded). The walk over the group
// is paid for by the finishes of the partitions it releases: between two
// walks every consumer region of g was restarted, and a restart set from
// RegionsToRestart that holds a consumer of released partitions holds
// their producers too, which finish again before the next walk.
func (s *Strategy) releaseFinishedPartitions(g topology.GroupID) {
	first, n := s.topo.GroupPartitions(g)
	before := len(s.release)
	for k := range n {
		if p := first + topology.ResultPartitionID(k); s.partitionOf(g, p) == partitionFinished {
			s.releasePartition(g, p)
		}
	}
	if released := len(s.release) - before; released > 0 && s.debug {
		if ce := s.log.Check(zap.DebugLevel, "release partitions"); ce != nil {
			ce.Write(zap.Int32("group", int32(g)), zap.Int("partitions", released))
		}
	}
}

// releaseIfUnneeded releases partition p of group g, just finished, if
// every consumer region of g has finished already (possible only when p's
// producer was restarted without them).
func (s *Strategy) releaseIfUnneeded(g topology.GroupID, p topology.ResultPartitionID) {
	if s.group[g].unfinishedConsumers == 0 {
		s.releasePartition(g, p)
		if !s.debug {
			return
		}
		if ce := s.log.Check(zap.DebugLevel, "release partitions"); ce != nil {
			ce.Write(zap.Int32("group", int32(g)), zap.Int("partitions", 1))
		}
	}
}

func (s *Strategy) releasePartition(g topology.GroupID, p topology.ResultPartitionID) {
	s.setPartition(g, p, partitionReleased)
	s.group[g].released++
	s.release = append(s.release, p)
}
