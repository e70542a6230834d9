package admission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPropertyShortcutsChangeNothing: passing over jobs at rest
// (resting.go), a claim passing over the jobs of queues that may yield
// it nothing by their queue's mark (claim_passover.go), and a claim
// merging only the jobs it may pick from (claim_streams.go) change no
// decision: random queue trees and random mixes in one level of queues
// give the same events, step by step, as when every pass visits every job
// it may serve and every claim looks at every job behind it
// (Queues.visitAll, the reference). -tree-mixes and -mixes run more (from
// -tree-first and -mixfrom).
func TestPropertyShortcutsChangeNothing(t *testing.T) {
	policies := []Policy{FIFO, Priority, FairShare, StateAware}
	same := func(kind string, seed uint64, build func() *sim) {
		s, ref := build(), build()
		ref.q.visitAll = true
		s.run(0)
		ref.run(0)
		require.Equal(t, ref.log, s.log, "%s seed %d: a shortcut changed a decision", kind, seed)
	}
	for seed := *treeFirst; seed < *treeFirst+uint64(*treeMixes); seed++ {
		same("queue-tree", seed, func() *sim { return randomTreeMixLimited(t, seed, policies...) })
	}
	for seed := *mixFrom; seed < *mixFrom+uint64(*mixes); seed++ {
		same("mix", seed, func() *sim { return randomMix(t, seed, policies...) })
	}
}
