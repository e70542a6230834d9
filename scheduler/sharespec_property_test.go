package scheduler

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// TestSharingSpeculationFailuresProperty runs random jobs in the hybrid
// modes (and now and then all-blocking), with hybrid slot sharing and,
// where the job allows it, speculation, in a small discrete-event
// runtime that holds several attempts per slot. Besides finishes it
// injects task failures (with and without lost partitions, half of them
// of attempts beside others of their task or in a shared slot), lost
// slots (replaced by fresh ones; or, in the runs whose slots come from
// an in-process admission, revoked, their ids granted again later),
// reclaimed slots and, now and then, a cancel of the job. After every
// Ready it checks:
//   - a cancel names an attempt that runs (or whose finish was reported);
//   - a released slot holds no attempt; a lost slot holds no attempt
//     once the Ready is applied;
//   - a deployment that is not shared goes into a slot nobody holds, a
//     shared one into a held slot;
//   - every held slot runs an attempt (none is kept for nothing), and the
//     pool counts exactly the held slots in use;
//   - a race has one winner, the attempt reported finished.
//
// At the end nothing is left: no slot in use, no slot tracked, no guest,
// every live entry free.
func TestSharingSpeculationFailuresProperty(t *testing.T) {
	seeds := uint64(3000)
	if testing.Short() {
		seeds = 400
	}
	var total ssCounts
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSharingSpeculationProperty(t, seed, &total) })
	}
	require.Positive(t, total.sharedSpeculated, "speculative attempts of tasks that share slots")
	require.Positive(t, total.sharedLost, "shared slots lost")
	t.Logf("%+v", total)
}

// ssCounts counts what the runs of TestSharingSpeculationFailuresProperty
// did, so that it is known to test what it says.
type ssCounts struct {
	shared, speculative, sharedSpeculated, lost, sharedLost, won int
}

// ssKey names an attempt of a task.
type ssKey struct {
	v TaskID
	a Attempt
}

// ssEnd is when an attempt's work is done.
type ssEnd struct {
	at time.Time
	k  ssKey
}

// ssHeap orders the ends by time, then task and attempt.
type ssHeap []ssEnd

func (h ssHeap) Len() int { return len(h) }
func (h ssHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	if h[i].k.v != h[j].k.v {
		return h[i].k.v < h[j].k.v
	}
	return h[i].k.a < h[j].k.a
}
func (h ssHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *ssHeap) Push(x any)   { *h = append(*h, x.(ssEnd)) }
func (h *ssHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// runSharingSpeculationProperty runs the job of one seed (see
// TestSharingSpeculationFailuresProperty) and adds what it did to n.
func runSharingSpeculationProperty(t *testing.T, seed uint64, n *ssCounts) {
	rng := rand.New(rand.NewPCG(seed, 0x5a5a))
	job, err := randomJob(rng)
	require.NoError(t, err)
	mode := []exchange.Mode{exchange.AllHybridFull, exchange.AllHybridFull, exchange.AllHybridSelective, exchange.AllBlocking}[rng.IntN(4)]
	rs := region.FromJob(job, mode)
	cluster := randomCluster(rng, rs)
	require.True(t, rs.Check(resource.Tally(cluster), resource.FitsEveryDimension).Runnable)
	// Some extra slots so speculative attempts find room.
	for range rng.IntN(4) {
		cluster = append(cluster, cluster[rng.IntN(len(cluster))])
	}
	rs = rs.ForCluster(resource.Tally(cluster), resource.FitsEveryDimension)
	topo := rs.Topology()

	c := DefaultSpeculation()
	c.BaselineRatio = []float64{0, 0.5, 0.75, 1}[rng.IntN(4)]
	c.BaselineLowerBound = time.Duration(rng.IntN(3)) * time.Second
	c.CheckInterval = time.Duration(100+rng.IntN(900)) * time.Millisecond
	c.MaxConcurrentExecutions = 2 + rng.IntN(2)
	c.BlockSlowNodeDuration = time.Duration(rng.IntN(3)) * time.Second
	if c.ValidateJob(rs) != nil || rng.IntN(5) == 0 {
		c = Speculation{}
	}
	cfg := Config{Speculation: c}
	// Half the runs take their slots from an in-process admission: a lost
	// slot is a revoked one, whose id comes back in a later grant.
	var adm *admission.StaticCluster
	admitted := rng.IntN(2) == 0

	nodes := 1 + rng.IntN(4)
	nextID := SlotID(1)
	profileOf := map[SlotID]resource.Profile{}
	mkSlot := func(p resource.Profile) slotpool.Slot {
		sl := slotpool.Slot{ID: nextID, Profile: p, Node: fmt.Sprintf("n%d", int(nextID)%nodes)}
		profileOf[nextID] = p
		nextID++
		return sl
	}
	var offered []slotpool.Slot
	for _, p := range cluster {
		offered = append(offered, mkSlot(p))
	}

	if admitted {
		adm, err = admission.NewStaticCluster(resource.FitsEveryDimension, offered...)
		require.NoError(t, err)
		cfg.Admission = adm
		if rng.IntN(2) == 0 {
			cfg.Pool.IdleTimeout = time.Duration(100+rng.IntN(900)) * time.Millisecond
		}
	}
	s := mustNew(t, rs, cfg)

	running := map[ssKey]SlotID{}
	inSlot := map[SlotID]map[ssKey]bool{}
	held := map[SlotID]bool{}
	finishedFirst := map[ssKey]bool{}
	finishedV := map[TaskID]bool{}
	leave := func(slot SlotID, k ssKey) {
		delete(inSlot[slot], k)
		if len(inSlot[slot]) == 0 {
			delete(inSlot, slot)
		}
	}
	var cal ssHeap
	now := time.Unix(0, 0)
	var lostSlot SlotID = -1

	name := func(k ssKey) string { return fmt.Sprintf("%s@%d", topo.VertexName(k.v), k.a) }
	apply := func(rd Ready, reported *ssKey) {
		t.Helper()
		for _, rs := range rd.Restarted {
			for _, r := range rs.Regions {
				for _, v := range s.rs.Members(r) {
					delete(finishedV, v)
				}
			}
		}
		for _, c := range rd.Cancel {
			k := ssKey{c.Task, c.Attempt}
			slot, ok := running[k]
			if !ok && !finishedFirst[k] {
				t.Errorf("cancel of %s, which does not run", name(k))
			}
			delete(running, k)
			if ok {
				leave(slot, k)
			}
		}
		if lostSlot >= 0 {
			if ks := inSlot[lostSlot]; len(ks) > 0 {
				t.Errorf("slot %d lost, and attempts %v run on in it", lostSlot, ks)
				for k := range ks {
					delete(running, k)
				}
				delete(inSlot, lostSlot)
			}
			lostSlot = -1
		}
		for _, r := range rd.Released {
			if ks := inSlot[r.Slot]; len(ks) > 0 {
				t.Errorf("slot %d released (region %d@%d) while %v run in it", r.Slot, r.Region, r.Attempt, ks)
			}
			delete(held, r.Slot)
		}
		n.won += len(rd.Won)
		for _, w := range rd.Won {
			if reported == nil || *reported != (ssKey{w.Task, w.Attempt}) {
				t.Errorf("winner %v, reported %v", w, reported)
			}
			for k := range running {
				if k.v == w.Task {
					t.Errorf("%s runs on after the race", name(k))
				}
			}
		}
		for _, d := range rd.Deploy {
			k := ssKey{d.Task, d.Attempt}
			if d.Shared {
				n.shared++
			}
			if d.Speculative {
				n.speculative++
				if len(inSlot[running[ssKey{d.Task, s.ext(d.Region, s.strategy.Attempt(d.Region))}]]) > 1 {
					n.sharedSpeculated++
				}
			}
			if d.Shared {
				if !held[d.Slot] || len(inSlot[d.Slot]) == 0 {
					t.Errorf("shared deploy of %s into slot %d, which is idle", name(k), d.Slot)
				}
			} else {
				if held[d.Slot] {
					// Members of one region slot go in together.
					same := false
					for u := range inSlot[d.Slot] {
						if rs.RegionOf(u.v) == d.Region && u.a == d.Attempt {
							same = true
						}
					}
					if !same {
						t.Errorf("deploy of %s into slot %d, held by %v", name(k), d.Slot, inSlot[d.Slot])
					}
				}
				held[d.Slot] = true
			}
			if _, ok := running[k]; ok {
				t.Errorf("%s deployed twice", name(k))
			}
			running[k] = d.Slot
			if inSlot[d.Slot] == nil {
				inSlot[d.Slot] = map[ssKey]bool{}
			}
			inSlot[d.Slot][k] = true
			dur := time.Duration(500+rng.IntN(1500)) * time.Millisecond
			if rng.IntN(8) == 0 {
				dur *= 10
			}
			heap.Push(&cal, ssEnd{at: now.Add(dur), k: k})
		}
		for slot := range held {
			if len(inSlot[slot]) == 0 {
				t.Errorf("slot %d held with nothing running in it", slot)
			}
		}
		for slot := range inSlot {
			if !held[slot] {
				t.Errorf("attempts %v run in slot %d, which is not held", inSlot[slot], slot)
			}
		}
		if st := s.pool.Stats(); st.InUse != len(held) {
			t.Errorf("the pool has %d slots in use, the runtime holds %d", st.InUse, len(held))
		}
		if err := s.pool.CheckInvariants(); err != nil {
			t.Errorf("pool: %v", err)
		}
	}
	if !admitted {
		require.NoError(t, s.SetCapacity(now, resource.Tally(cluster)))
		require.NoError(t, s.Offer(now, offered...))
	}
	require.NoError(t, s.Start(now))
	apply(s.Ready(), nil)
	failures := rng.IntN(8)
	cancelAt := -1
	if rng.IntN(10) == 0 {
		cancelAt = rng.IntN(40)
	}
	for step := 0; s.State() == JobRunning && !t.Failed(); step++ {
		require.Less(t, step, 100000, "no end")
		if step == cancelAt {
			now = now.Add(time.Millisecond)
			require.NoError(t, s.Cancel(now, errors.New("killed")))
			apply(s.Ready(), nil)
			break
		}
		if failures > 0 && len(running) > 0 && rng.IntN(6) == 0 {
			failures--
			keys := make([]ssKey, 0, len(running))
			for k := range running {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b ssKey) int {
				if a.v != b.v {
					return int(a.v - b.v)
				}
				return int(a.a - b.a)
			})
			// Half the time, an attempt of a task with several attempts,
			// or one in a slot with others.
			var crowded []ssKey
			perTask := map[TaskID]int{}
			for _, k := range keys {
				perTask[k.v]++
			}
			for _, k := range keys {
				if perTask[k.v] > 1 || len(inSlot[running[k]]) > 1 {
					crowded = append(crowded, k)
				}
			}
			k := keys[rng.IntN(len(keys))]
			if len(crowded) > 0 && rng.IntN(2) == 0 {
				k = crowded[rng.IntN(len(crowded))]
			}
			now = now.Add(time.Millisecond)
			if admitted && rng.IntN(4) == 0 { // the admission wants the slot back once its tasks end
				require.NoError(t, adm.Reclaim(running[k]))
				require.NoError(t, s.Tick(now))
				apply(s.Ready(), nil)
				continue
			}
			switch rng.IntN(3) {
			case 0: // the attempt fails
				slot := running[k]
				leave(slot, k)
				delete(running, k)
				require.NoError(t, s.TaskFailed(now, k.v, k.a))
			case 1: // it fails reading a finished task's lost partitions
				var lost []PartitionID
				var done []TaskID
				for v := range finishedV {
					done = append(done, v)
				}
				slices.Sort(done)
				if len(done) > 0 {
					lost, _ = s.strategy.BlockingPartitionsOf(done[rng.IntN(len(done))])
				}
				slot := running[k]
				leave(slot, k)
				delete(running, k)
				require.NoError(t, s.TaskFailed(now, k.v, k.a, lost...))
			case 2: // its slot is lost and replaced
				slot := running[k]
				n.lost++
				if len(inSlot[slot]) > 1 {
					n.sharedLost++
				}
				delete(held, slot)
				lostSlot = slot
				if admitted {
					require.NoError(t, adm.Revoke(slot, slotpool.ReasonPreempted))
					require.NoError(t, s.Tick(now))
				} else {
					require.NoError(t, s.SlotLost(now, slot))
					apply(s.Ready(), nil)
					require.NoError(t, s.Offer(now, mkSlot(profileOf[slot])))
				}
			}
			apply(s.Ready(), nil)
			continue
		}
		dl, hasDL := s.NextDeadline()
		if cal.Len() == 0 || (hasDL && dl.Before(cal[0].at)) {
			require.True(t, hasDL, "nothing to wait for: running %v, waiting %v", running, s.Status().Waiting)
			now = dl
			require.NoError(t, s.Tick(now))
			apply(s.Ready(), nil)
			continue
		}
		e := heap.Pop(&cal).(ssEnd)
		k := e.k
		slot, ok := running[k]
		if !ok {
			continue // canceled
		}
		if e.at.After(now) {
			now = e.at
		}
		err := s.TaskFinished(now, k.v, k.a)
		if errors.Is(err, strategy.ErrEarlyFinish) {
			heap.Push(&cal, ssEnd{at: now.Add(100 * time.Millisecond), k: k})
			continue
		}
		require.NoError(t, err)
		leave(slot, k)
		delete(running, k)
		finishedFirst[k] = true
		finishedV[k.v] = true
		apply(s.Ready(), &k)
	}
	if t.Failed() {
		t.Logf("seed %d mode %v speculation %v admitted %v", seed, mode, c.Enabled, admitted)
		return
	}
	if cancelAt < 0 {
		require.Equal(t, JobFinished, s.State(), "%v", s.Err())
	}
	require.Empty(t, running)
	require.Empty(t, held)
	require.Zero(t, s.pool.Stats().InUse)
	require.Zero(t, s.slots.len())
	require.Empty(t, s.guestsOf)
	require.Len(t, s.freeLives, len(s.lives))
	for r := range s.regions {
		require.False(t, s.regions[r].deployed, "region %d deployed", r)
		require.False(t, s.regions[r].waiting, "region %d waiting", r)
	}
}
