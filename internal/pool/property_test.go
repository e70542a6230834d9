package pool

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/require"
)

var propertyProfiles = []resource.Profile{small, medium, big, gpu, resource.Unknown}

// model is what the test knows from the outside: slots offered and lost,
// which task the pool's events put in which slot, and how each bulk ended.
type model struct {
	inPool map[slotpool.SlotID]resource.Profile
	task   map[slotpool.SlotID][2]int64 // slot -> (bulk, request) from Fulfilled
	bulks  map[slotpool.BulkID][]Request
	// outcome is BulkWaiting from Submit, then BulkFulfilled or BulkFailed
	// from the pool's events, or BulkCanceled from the test's Cancel.
	outcome map[slotpool.BulkID]BulkState
}

func newModel() *model {
	return &model{
		inPool:  map[slotpool.SlotID]resource.Profile{},
		task:    map[slotpool.SlotID][2]int64{},
		bulks:   map[slotpool.BulkID][]Request{},
		outcome: map[slotpool.BulkID]BulkState{},
	}
}

// apply checks the events of one step against the model.
func (m *model) apply(p *Pool, events []Event, matching resource.Matching) error {
	for _, ev := range events {
		switch e := ev.(type) {
		case Fulfilled:
			req := m.bulks[e.Bulk]
			if m.outcome[e.Bulk] != BulkWaiting {
				return fmt.Errorf("bulk %d fulfilled in state %v", e.Bulk, m.outcome[e.Bulk])
			}
			if len(e.Slots) != len(req) {
				return fmt.Errorf("bulk %d: %d slots for %d requests", e.Bulk, len(e.Slots), len(req))
			}
			for r, id := range e.Slots {
				if t, busy := m.task[id]; busy {
					return fmt.Errorf("slot %d given to bulk %d while bulk %d request %d uses it", id, e.Bulk, t[0], t[1])
				}
				pr, ok := m.inPool[id]
				if !ok {
					return fmt.Errorf("bulk %d got slot %d that is not in the pool", e.Bulk, id)
				}
				if !matching.Serves(pr, req[r].Profile) {
					return fmt.Errorf("bulk %d request %d (%v) got slot %d (%v)", e.Bulk, r, req[r].Profile, id, pr)
				}
				m.task[id] = [2]int64{int64(e.Bulk), int64(r)}
			}
			m.outcome[e.Bulk] = BulkFulfilled
		case Failed:
			if m.outcome[e.Bulk] != BulkWaiting {
				return fmt.Errorf("bulk %d failed in state %v", e.Bulk, m.outcome[e.Bulk])
			}
			m.outcome[e.Bulk] = BulkFailed
		case Lost:
			t, busy := m.task[e.Slot]
			if !busy || t != [2]int64{int64(e.Bulk), int64(e.Request)} {
				return fmt.Errorf("lost slot %d reported for bulk %d request %d, model says %v", e.Slot, e.Bulk, e.Request, t)
			}
			delete(m.task, e.Slot)
		default:
			return fmt.Errorf("unexpected event %#v", ev)
		}
	}
	// free + held + in use = offered - lost, and in use = what events say.
	st := p.Stats()
	if st.Slots != len(m.inPool) || st.InUse != len(m.task) {
		return fmt.Errorf("pool has %d slots (%d in use), model %d (%d)", st.Slots, st.InUse, len(m.inPool), len(m.task))
	}
	for id, t := range m.task {
		info, ok := p.Slot(id)
		if !ok || info.State != SlotInUse || info.Bulk != slotpool.BulkID(t[0]) || info.Request != int(t[1]) {
			return fmt.Errorf("slot %d: pool says %+v, model %v", id, info, t)
		}
	}
	for id := range m.outcome {
		want := m.state(id)
		if got := p.State(id); got != want {
			return fmt.Errorf("bulk %d (%v): pool says %v, model %v", id, m.outcome[id], got, want)
		}
		if _, live := p.Bulk(id); live != (want != BulkUnknown) {
			return fmt.Errorf("bulk %d: Bulk says live %v, model %v", id, live, want)
		}
	}
	return nil
}

// state returns what Pool.State must say of a bulk: a bulk is live while
// it waits or a task of it runs; once it failed, was canceled, or its last
// task ended, the pool has retired it (BulkUnknown).
func (m *model) state(id slotpool.BulkID) BulkState {
	switch m.outcome[id] {
	case BulkWaiting:
		return BulkWaiting
	case BulkFulfilled:
		for _, t := range m.task {
			if slotpool.BulkID(t[0]) == id {
				return BulkFulfilled
			}
		}
	}
	return BulkUnknown
}

// retired returns the ids of the retired bulks among 1..last, in order.
func (m *model) retired(last slotpool.BulkID) []slotpool.BulkID {
	var ids []slotpool.BulkID
	for id := slotpool.BulkID(1); id <= last; id++ {
		if m.state(id) == BulkUnknown {
			ids = append(ids, id)
		}
	}
	return ids
}

func randomBulk(rng *rand.Rand, maxSize int, unboundedP float64) []Request {
	n := 1 + rng.IntN(maxSize)
	out := make([]Request, n)
	for i := range out {
		out[i] = Request{Profile: propertyProfiles[rng.IntN(len(propertyProfiles))], Unbounded: rng.Float64() < unboundedP}
	}
	return out
}

// TestPropertyRandomOperationsKeepInvariants runs random offers, releases,
// losses, submits (some reusing the id of a retired bulk), cancels (some
// of retired bulks, which are rejected) and clock ticks, checking after
// every step that no slot is assigned twice, every assignment serves its
// request, slots are conserved, every bulk is live exactly until it is
// retired, and every cached verdict matches a fresh computation.
func TestPropertyRandomOperationsKeepInvariants(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		matching := propertyMatching(seed)
		ops := newRandomOperations(seed)
		p := New(Config{Matching: matching, Timeout: time.Minute})
		for step := range 300 {
			require.NoError(t, ops.next(t, p)(p), "seed %d step %d", seed, step)
			require.NoError(t, p.CheckInvariants(), "seed %d step %d", seed, step)
			require.NoError(t, ops.m.apply(p, p.Ready(), matching), "seed %d step %d", seed, step)
		}
	}
}

// propertyMatching is the matching of a seed's random operations.
func propertyMatching(seed uint64) resource.Matching {
	if seed%5 == 0 {
		return resource.ExactMatch
	}
	return resource.FitsEveryDimension
}

// randomOperations draws the random operations of the property tests,
// steered by a model of what the pool should have done.
type randomOperations struct {
	rng                *rand.Rand
	m                  *model
	seed               uint64
	step               int
	now                time.Time
	nextSlot, nextBulk int64
}

func newRandomOperations(seed uint64) *randomOperations {
	return &randomOperations{rng: rand.New(rand.NewPCG(seed, 42)), m: newModel(), seed: seed, now: t0, nextSlot: 1, nextBulk: 1}
}

// next draws the next operation (updating the model as if it succeeded)
// and returns it, to apply to one pool or to several in lockstep. The
// cancel of a retired bulk is checked on p, then does nothing.
func (o *randomOperations) next(t *testing.T, p *Pool) func(*Pool) error {
	rng, m := o.rng, o.m
	o.step++
	switch op := rng.IntN(100); {
	case op < 25:
		var slots []slotpool.Slot
		for range 1 + rng.IntN(3) {
			s := slotpool.Slot{ID: slotpool.SlotID(o.nextSlot), Profile: propertyProfiles[rng.IntN(len(propertyProfiles))]}
			o.nextSlot++
			slots = append(slots, s)
			m.inPool[s.ID] = s.Profile
		}
		now := o.now
		return func(p *Pool) error { return p.Offer(now, slots...) }
	case op < 50:
		id := slotpool.BulkID(o.nextBulk)
		if retired := m.retired(slotpool.BulkID(o.nextBulk - 1)); len(retired) > 0 && rng.IntN(4) == 0 {
			id = retired[rng.IntN(len(retired))]
		} else {
			o.nextBulk++
		}
		r := randomBulk(rng, 5, 0.2)
		m.bulks[id] = r
		m.outcome[id] = BulkWaiting
		now := o.now
		return func(p *Pool) error { return p.Submit(now, Bulk{ID: id, Requests: r}) }
	case op < 70:
		if id, ok := pick(rng, m.task); ok {
			delete(m.task, id)
			now := o.now
			return func(p *Pool) error { return p.Release(now, id) }
		}
	case op < 78:
		if id, ok := pick(rng, m.inPool); ok {
			delete(m.inPool, id) // a task on it is reported Lost
			now := o.now
			return func(p *Pool) error { return p.Lose(now, id) }
		}
	case op < 86:
		if o.nextBulk > 1 {
			id := slotpool.BulkID(1 + rng.IntN(int(o.nextBulk-1)))
			if m.state(id) == BulkUnknown {
				require.ErrorIs(t, p.Cancel(o.now, id), ErrUnknownBulk, "seed %d step %d: cancel of retired bulk %d", o.seed, o.step, id)
				break
			}
			for s, t := range m.task {
				if slotpool.BulkID(t[0]) == id {
					delete(m.task, s)
				}
			}
			m.outcome[id] = BulkCanceled
			now := o.now
			return func(p *Pool) error { return p.Cancel(now, id) }
		}
	default:
		o.now = o.now.Add(time.Duration(rng.IntN(40)) * time.Second)
		now := o.now
		return func(p *Pool) error { p.Tick(now); return nil }
	}
	return func(*Pool) error { return nil }
}

// pick returns a random key of a map, deterministically for the rng.
func pick[V any](rng *rand.Rand, m map[slotpool.SlotID]V) (slotpool.SlotID, bool) {
	if len(m) == 0 {
		return 0, false
	}
	keys := sortedKeys(m)
	return keys[rng.IntN(len(keys))], true
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

// TestPropertyEveryBulkIsEventuallyFulfilled: with a cluster that can hold
// the largest bulk and only bounded tasks that end after a while, every
// bulk is fulfilled (no deadlock, no starvation), and bulks of the same
// shape are fulfilled in submission order.
func TestPropertyEveryBulkIsEventuallyFulfilled(t *testing.T) {
	cluster := []resource.Count{{Profile: small, N: 3}, {Profile: medium, N: 2}, {Profile: big, N: 2}, {Profile: gpu, N: 1}}
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := New(Config{Timeout: 1000 * time.Hour})
		now := t0
		id := slotpool.SlotID(1)
		var slots []slotpool.Slot
		for _, c := range cluster {
			for range c.N {
				slots = append(slots, slotpool.Slot{ID: id, Profile: c.Profile})
				id++
			}
		}
		rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		m := newModel()
		running := map[slotpool.SlotID]int{} // slot -> steps left
		var order []slotpool.BulkID
		shapeOf := map[slotpool.BulkID]string{}
		const bulks = 60
		next := slotpool.BulkID(1)
		for step := 0; step < 5000 && (next <= bulks || p.Stats().Waiting > 0); step++ {
			if len(slots) > 0 && rng.IntN(3) == 0 { // the cluster's slots arrive over time
				m.inPool[slots[0].ID] = slots[0].Profile
				require.NoError(t, p.Offer(now, slots[0]))
				slots = slots[1:]
			}
			if next <= bulks && rng.IntN(2) == 0 {
				var r []Request
				for {
					r = randomBulk(rng, 6, 0)
					if fitsCluster(r, cluster) {
						break
					}
				}
				m.bulks[next] = r
				m.outcome[next] = BulkWaiting
				shapeOf[next] = shapeKey(r)
				require.NoError(t, p.Submit(now, Bulk{ID: next, Requests: r}))
				next++
			}
			for _, s := range sortedKeys(running) {
				left := running[s]
				if left == 0 {
					delete(running, s)
					delete(m.task, s)
					require.NoError(t, p.Release(now, s), "seed %d", seed)
				} else {
					running[s] = left - 1
				}
			}
			now = now.Add(time.Second)
			p.Tick(now)
			require.NoError(t, p.CheckInvariants(), "seed %d step %d", seed, step)
			events := p.Ready()
			require.NoError(t, m.apply(p, events, resource.FitsEveryDimension), "seed %d step %d", seed, step)
			for _, ev := range events {
				f := ev.(Fulfilled)
				order = append(order, f.Bulk)
				for _, s := range f.Slots {
					running[s] = rng.IntN(5)
				}
			}
		}
		require.Len(t, order, bulks, "seed %d: deadlock or starvation: waiting %v", seed, p.Waiting())
		last := map[string]slotpool.BulkID{}
		for _, b := range order {
			require.Less(t, last[shapeOf[b]], b, "seed %d: same-shaped bulks fulfilled out of order: %v", seed, order)
			last[shapeOf[b]] = b
		}
	}
}

func fitsCluster(r []Request, cluster []resource.Count) bool {
	profiles := make([]resource.Profile, len(r))
	for i, q := range r {
		profiles[i] = q.Profile
	}
	return resource.Assign(resource.Tally(profiles), cluster, resource.FitsEveryDimension).Complete()
}

func shapeKey(r []Request) string {
	var keys []string
	for _, q := range r {
		keys = append(keys, q.Profile.String())
	}
	slices.Sort(keys)
	return fmt.Sprint(keys)
}
