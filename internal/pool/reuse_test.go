package pool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A pool renewed over the storage of one that ran other operations (its
// slot table, id tables, bulk records and event buffer full of them)
// does what a new pool does: random operations applied to both in
// lockstep give the same events, and the renewed one keeps its
// invariants.
func TestRenewedPoolRunsAsNew(t *testing.T) {
	var old *Pool
	for seed := uint64(1); seed <= 60; seed++ {
		matching := propertyMatching(seed)
		cfg := Config{Matching: matching, Timeout: time.Minute}
		fresh := New(cfg)
		renewed := Renew(old, cfg)
		ops := newRandomOperations(seed)
		for step := range 200 + int(seed%4)*100 { // runs of several lengths: the next one's storage is larger or smaller
			op := ops.next(t, fresh)
			errFresh, errRenewed := op(fresh), op(renewed)
			require.Equal(t, errFresh, errRenewed, "seed %d step %d", seed, step)
			require.NoError(t, renewed.CheckInvariants(), "seed %d step %d", seed, step)
			want := fresh.Ready()
			require.Equal(t, want, renewed.Ready(), "seed %d step %d", seed, step)
			require.NoError(t, ops.m.apply(fresh, want, matching), "seed %d step %d", seed, step)
		}
		old = renewed
	}
}
