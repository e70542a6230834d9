package admission

import (
	"slices"
	"testing"
	"time"

	"github.com/regionsched/regionsched/internal/pool"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

var (
	t0     = time.Unix(0, 0)
	small  = resource.New(1000, 1024)
	medium = resource.New(2000, 2048)
	big    = resource.New(4000, 4096)
	gpu    = resource.New(1000, 1024).WithExtended("gpu", 1)
)

// harness is a pool linked to a StaticCluster through a recorder, with
// the pool's invariants checked after every step.
type harness struct {
	t    *testing.T
	p    *pool.Pool
	c    *StaticCluster
	rec  *recorder
	link *pool.Link
	logs *observer.ObservedLogs // the link's warnings
	now  time.Time
}

// newHarness links a pool (cfg, with Admission set) to a cluster of the
// given slots and delivers the cluster's first messages (its capacity).
func newHarness(t *testing.T, cfg pool.Config, slots ...slotpool.Slot) *harness {
	t.Helper()
	cfg.Admission = true
	c, err := NewStaticCluster(cfg.Matching, slots...)
	require.NoError(t, err)
	core, logs := observer.New(zap.WarnLevel)
	h := &harness{t: t, p: pool.New(cfg), c: c, logs: logs, now: t0}
	h.rec = &recorder{h: h}
	h.link = pool.NewLink(h.p, h.rec, zap.New(core))
	h.pump()
	return h
}

// recorder is the Admission linked to the pool: it passes every message
// on to the cluster and records it, fails the test when the cluster
// rejects one, and checks the pool's invariants whenever the link
// collects the cluster's messages, that is after every batch the pool
// admitted.
type recorder struct {
	h    *harness
	sent []slotpool.ToAdmission
	got  []slotpool.FromAdmission
}

func (r *recorder) Handle(now time.Time, msg slotpool.ToAdmission) error {
	r.sent = append(r.sent, msg)
	err := r.h.c.Handle(now, msg)
	require.NoError(r.h.t, err)
	return err
}

func (r *recorder) Ready() []slotpool.FromAdmission {
	r.h.check()
	msgs := r.h.c.Ready()
	r.got = append(r.got, msgs...)
	return msgs
}

func (r *recorder) Tick(now time.Time) { r.h.c.Tick(now) }

func (r *recorder) NextDeadline() (time.Time, bool) { return r.h.c.NextDeadline() }

func (h *harness) check() {
	h.t.Helper()
	require.NoError(h.t, h.p.CheckInvariants())
}

// pump carries messages until the pool and the cluster are quiet and
// returns the pool's other events; the pool must have accepted every
// message of the cluster.
func (h *harness) pump() []pool.Event {
	h.t.Helper()
	events := slices.Clone(h.link.Ready(h.now))
	require.Zero(h.t, h.logs.Len(), "the link logged %v", h.logs.All())
	h.check()
	return events
}

// reset forgets the recorded messages.
func (h *harness) reset() { h.rec.sent, h.rec.got = nil, nil }

func (h *harness) submit(id slotpool.BulkID, profiles ...resource.Profile) {
	h.t.Helper()
	requests := make([]pool.Request, len(profiles))
	for i, pr := range profiles {
		requests[i] = pool.Request{Profile: pr}
	}
	h.do(h.p.Submit(h.now, pool.Bulk{ID: id, Requests: requests}))
}

func (h *harness) release(id slotpool.SlotID) {
	h.t.Helper()
	h.do(h.p.Release(h.now, id))
}

func (h *harness) cancel(id slotpool.BulkID) {
	h.t.Helper()
	h.do(h.p.Cancel(h.now, id))
}

// do requires that an operation on the pool succeeded and checks the
// pool's invariants.
func (h *harness) do(err error) {
	h.t.Helper()
	require.NoError(h.t, err)
	h.check()
}

// advance moves the clock, ticks both sides and returns what followed
// (pump).
func (h *harness) advance(d time.Duration) []pool.Event {
	h.t.Helper()
	h.now = h.now.Add(d)
	h.link.Tick(h.now)
	h.check()
	return h.pump()
}

func slot(id slotpool.SlotID, pr resource.Profile) slotpool.Slot {
	return slotpool.Slot{ID: id, Profile: pr}
}
