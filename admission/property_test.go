package admission

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/require"
)

var propertyProfiles = []resource.Profile{small, medium, big, gpu, resource.Unknown}

// TestPropertyAdmissionEventuallyServesEveryBulk: with a cluster that can
// hold the largest bulk and only bounded tasks that end after a while,
// every bulk is fulfilled (no deadlock, no starvation) when every slot
// comes from a StaticCluster through asks and grants, idle slots go back,
// and the cluster revokes or reclaims slots now and then (a task on a
// revoked slot is failed over by resubmitting its region as a new bulk).
func TestPropertyAdmissionEventuallyServesEveryBulk(t *testing.T) {
	cluster := []resource.Count{{Profile: small, N: 3}, {Profile: medium, N: 2}, {Profile: big, N: 2}, {Profile: gpu, N: 1}}
	var slots []slotpool.Slot
	for _, c := range cluster {
		for range c.N {
			slots = append(slots, slot(slotpool.SlotID(len(slots)+1), c.Profile))
		}
	}
	for seed := uint64(1); seed <= 150; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		h := newHarness(t, pool.Config{Timeout: 1000 * time.Hour, IdleTimeout: 3 * time.Second}, slots...)
		running := map[slotpool.SlotID]int{} // slot -> steps left
		requests := map[slotpool.BulkID][]resource.Profile{}
		pending := map[slotpool.BulkID]bool{}
		next := slotpool.BulkID(1)
		submit := func(profiles []resource.Profile) {
			requests[next], pending[next] = profiles, true
			h.submit(next, profiles...)
			next++
		}
		const bulks = 40
		for step := 0; step < 20000 && (next <= bulks || len(pending) > 0); step++ {
			h.reset() // the recorded messages are not needed here
			if next <= bulks && rng.IntN(2) == 0 {
				submit(randomBulkFitting(rng, cluster))
			}
			if len(running) > 0 && rng.IntN(25) == 0 {
				ids := sortedKeys(running)
				id := ids[rng.IntN(len(ids))]
				if rng.IntN(2) == 0 {
					require.NoError(t, h.c.Revoke(id, slotpool.ReasonPreempted))
				} else {
					require.NoError(t, h.c.Reclaim(id))
				}
			}
			for _, s := range sortedKeys(running) {
				if left := running[s]; left > 0 {
					running[s] = left - 1
					continue
				}
				delete(running, s)
				h.release(s)
			}
			for _, ev := range h.advance(time.Second) {
				switch e := ev.(type) {
				case pool.Fulfilled:
					delete(pending, e.Bulk)
					for _, s := range e.Slots {
						running[s] = rng.IntN(5)
					}
				case pool.Lost: // fail over: the region runs again as a new bulk
					delete(running, e.Slot)
					submit(requests[e.Bulk])
				default:
					t.Fatalf("seed %d step %d: unexpected %#v", seed, step, ev)
				}
			}
		}
		require.Empty(t, pending, "seed %d: bulks never served; pool %+v, cluster has %v", seed, h.p.Stats(), h.c.Available())
	}
}

// randomBulkFitting returns the profiles of a random bulk of 1 to 6
// requests that the cluster can hold.
func randomBulkFitting(rng *rand.Rand, cluster []resource.Count) []resource.Profile {
	for {
		profiles := make([]resource.Profile, 1+rng.IntN(6))
		for i := range profiles {
			profiles[i] = propertyProfiles[rng.IntN(len(propertyProfiles))]
		}
		if resource.Assign(resource.Tally(profiles), cluster, resource.FitsEveryDimension).Complete() {
			return profiles
		}
	}
}

// sortedKeys returns the keys of a map in order, so that seeds replay.
func sortedKeys[V any](m map[slotpool.SlotID]V) []slotpool.SlotID {
	keys := make([]slotpool.SlotID, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
