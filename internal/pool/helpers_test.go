package pool

import (
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	t0     = time.Unix(0, 0)
	small  = resource.New(1000, 1024)
	medium = resource.New(2000, 2048)
	big    = resource.New(4000, 4096)
	gpu    = resource.New(1000, 1024).WithExtended("gpu", 1)
)

// harness drives a pool and checks its invariants after every step.
type harness struct {
	t   *testing.T
	p   *Pool
	now time.Time
}

func newHarness(t *testing.T, cfg Config) *harness {
	return &harness{t: t, p: New(cfg), now: t0}
}

func (h *harness) check() {
	h.t.Helper()
	require.NoError(h.t, h.p.CheckInvariants())
}

func (h *harness) offer(slots ...slotpool.Slot) {
	h.t.Helper()
	require.NoError(h.t, h.p.Offer(h.now, slots...))
	h.check()
}

func (h *harness) submit(id slotpool.BulkID, profiles ...resource.Profile) {
	h.t.Helper()
	require.NoError(h.t, h.p.Submit(h.now, Bulk{ID: id, Requests: reqs(profiles...)}))
	h.check()
}

func (h *harness) release(id slotpool.SlotID) {
	h.t.Helper()
	require.NoError(h.t, h.p.Release(h.now, id))
	h.check()
}

func (h *harness) lose(id slotpool.SlotID) {
	h.t.Helper()
	require.NoError(h.t, h.p.Lose(h.now, id))
	h.check()
}

func (h *harness) cancel(id slotpool.BulkID) {
	h.t.Helper()
	require.NoError(h.t, h.p.Cancel(h.now, id))
	h.check()
}

func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.now = h.now.Add(d)
	h.p.Tick(h.now)
	h.check()
}

func (h *harness) admit(m slotpool.FromAdmission) {
	h.t.Helper()
	require.NoError(h.t, h.p.Admit(h.now, m))
	h.check()
}

// events drains the pool's events.
func (h *harness) events() []Event { return h.p.Ready() }

func reqs(profiles ...resource.Profile) []Request {
	out := make([]Request, len(profiles))
	for i, pr := range profiles {
		out[i] = Request{Profile: pr}
	}
	return out
}

func slot(id slotpool.SlotID, pr resource.Profile) slotpool.Slot {
	return slotpool.Slot{ID: id, Profile: pr}
}

// assertRetired asserts that the pool forgot a bulk: State and Bulk no
// longer know it and Cancel rejects it (changing nothing).
func (h *harness) assertRetired(id slotpool.BulkID) {
	h.t.Helper()
	assert.Equal(h.t, BulkUnknown, h.p.State(id))
	_, live := h.p.Bulk(id)
	assert.False(h.t, live)
	assert.ErrorIs(h.t, h.p.Cancel(h.now, id), ErrUnknownBulk)
	h.check()
}
