package admission

import (
	"cmp"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// decide grants what it can, queue by queue (in name order), to the jobs
// of each queue in policy order; then, if the first job that wants a grant
// and may have one could not be served, reclaims slots for it from the
// jobs behind it.
func (q *Queues) decide() {
	if q.batch > 0 {
		q.deferred = true
		return
	}
	var first *job
	var firstLack []resource.Count
	var touched []*job
	var reserved []int32
	for _, qu := range q.qorder {
		it := qu.order.Iterator()
		for it.Next() {
			j := it.Value().(*job)
			if why := q.blocked(j); why != "" {
				q.log.Debug("job waits", zap.String("job", j.spec.Name), zap.String("why", why))
				continue
			}
			if !q.anyFree() {
				if first == nil {
					first, firstLack = j, j.firstNeed()
				}
				break
			}
			lack, grantedSome := q.serve(j)
			if grantedSome {
				touched = append(touched, j)
			}
			if lack != nil && first == nil {
				first, firstLack = j, lack
				q.log.Debug("job waits", zap.String("job", j.spec.Name), zap.String("why", "its ask does not fit the free slots"))
				// The free slots that serve what first lacks wait for it
				// (with the slots reclaimed for it below): granted to a
				// job behind, they would be reclaimed at once, and a pool
				// that gives back a reclaimed slot it does not use would
				// have it granted and reclaimed again, forever.
				if _, _, ok := q.reclaimable(j, lack); ok {
					reserved = q.reserve(lack)
				}
			}
		}
	}
	for _, idx := range reserved {
		q.put(idx)
	}
	for _, j := range touched {
		q.updateOrder(j)
	}
	if first != nil && firstLack != nil {
		q.reclaimFor(first, firstLack)
	}
}

// blocked says why a job may not have its first grant yet ("" if it may).
func (q *Queues) blocked(j *job) string {
	if j.state != JobAccepted {
		return ""
	}
	qu := j.queue
	if qu.cfg.Policy == StateAware && qu.starting > 0 {
		return "stateaware: another job of " + qu.cfg.Name + " is starting"
	}
	if qu.cfg.MaxRunningJobs > 0 && qu.running >= qu.cfg.MaxRunningJobs {
		return "maxRunningJobs of " + qu.cfg.Name + " reached"
	}
	return ""
}

// firstNeed is what the job needs first: its driver, else its first ask.
func (j *job) firstNeed() []resource.Count {
	if j.driver && !j.hasSlot {
		return []resource.Count{{Profile: *j.spec.Driver, N: 1}}
	}
	if len(j.asks) > 0 {
		return j.asks[0].left
	}
	return nil
}

// anyFree reports whether some slot is free.
func (q *Queues) anyFree() bool {
	for _, f := range q.free {
		if len(f) > 0 {
			return true
		}
	}
	return false
}

// freeCounts tallies the free slots per profile; prof[i] is the profile
// index of entry i.
func (q *Queues) freeCounts() (counts []resource.Count, prof []int32) {
	for p, f := range q.free {
		if len(f) > 0 {
			counts = append(counts, resource.Count{Profile: q.profiles[p], N: len(f)})
			prof = append(prof, int32(p))
		}
	}
	return counts, prof
}

// serve grants a job what fits: its driver first, then its asks in order
// (an all-or-nothing ask whole or not at all). It returns what the job
// still lacks first (nil if nothing) and whether anything was granted.
func (q *Queues) serve(j *job) (lack []resource.Count, grantedSome bool) {
	if j.driver && !j.hasSlot {
		need := []resource.Count{{Profile: *j.spec.Driver, N: 1}}
		free, prof := q.freeCounts()
		a := resource.Assign(need, free, q.cfg.Matching)
		if !a.Complete() {
			return need, false
		}
		idx := q.take(prof[a.Pairs[0].Slot], 1)[0]
		s := &q.slots[idx]
		s.state, s.owner = slotDriver, j.id
		j.hasSlot = true
		j.granted++
		q.firstGrant(j)
		q.events = append(q.events, Event{At: q.now, Job: j.spec.Name, ID: j.id, Kind: DriverGranted, Slot: s.slot.ID})
		q.log.Debug("driver granted", zap.String("job", j.spec.Name), zap.Int64("slot", int64(s.slot.ID)))
		grantedSome = true
	}
	for i := 0; i < len(j.asks); {
		a := j.asks[i]
		free, prof := q.freeCounts()
		if len(free) == 0 {
			if lack == nil {
				lack = a.left
			}
			break
		}
		asg := resource.Assign(a.left, free, q.cfg.Matching)
		if asg.Matched == 0 || (a.allOrNothing && !asg.Complete()) {
			if lack == nil {
				lack = a.left
			}
			i++
			continue
		}
		var granted []slotpool.Slot
		for _, pair := range asg.Pairs {
			for _, idx := range q.take(prof[pair.Slot], pair.N) {
				s := &q.slots[idx]
				s.state, s.owner = slotGranted, j.id
				granted = append(granted, s.slot)
			}
			a.left[pair.Request].N -= pair.N
		}
		j.granted += len(granted)
		j.out = append(j.out, slotpool.Grant{Ask: a.id, Slots: granted})
		q.firstGrant(j)
		grantedSome = true
		q.log.Debug("ask granted", zap.String("job", j.spec.Name), zap.Int64("ask", int64(a.id)), zap.Int("slots", len(granted)))
		if asg.Complete() {
			j.asks = slices.Delete(j.asks, i, i+1)
			continue
		}
		if lack == nil {
			lack = a.left
		}
		i++
	}
	return lack, grantedSome
}

// reserve takes out of the free stacks the free slots that serve what
// lack asks for (as many as match); decide puts them back.
func (q *Queues) reserve(lack []resource.Count) []int32 {
	free, prof := q.freeCounts()
	var out []int32
	for _, pair := range resource.Assign(lack, free, q.cfg.Matching).Pairs {
		out = append(out, q.take(prof[pair.Slot], pair.N)...)
	}
	return out
}

// take pops n free slots of profile p.
func (q *Queues) take(p int32, n int) []int32 {
	f := q.free[p]
	out := slices.Clone(f[len(f)-n:])
	slices.Reverse(out)
	q.free[p] = f[:len(f)-n]
	return out
}

// put makes a slot free again.
func (q *Queues) put(idx int32) {
	s := &q.slots[idx]
	s.state = slotFree
	q.free[s.profile] = append(q.free[s.profile], idx)
}

// firstGrant moves an accepted job to starting at its first grant.
func (q *Queues) firstGrant(j *job) {
	if j.state == JobAccepted {
		q.move(j, JobStarting, "first grant")
		if j.queue.cfg.Policy == StateAware {
			j.queue.startingJobs = append(j.queue.startingJobs, j)
		}
	}
}

// reclaimFor asks the jobs behind `first` for slots that would complete
// what it lacks, most recently submitted jobs first, never drivers, and
// only if what they hold can complete it (slots held by drivers never
// come back while their jobs wait). Slots already being reclaimed count
// as coming.
func (q *Queues) reclaimFor(first *job, lack []resource.Count) {
	coming, behind, ok := q.reclaimable(first, lack)
	if !ok {
		return
	}
	// Lowest-priority owners first (SPEC.md section 5), then the most
	// recently submitted, their highest slot first.
	slices.SortStableFunc(behind, func(a, b int32) int {
		oa, ob := q.jobs[q.slots[a].owner], q.jobs[q.slots[b].owner]
		if oa.spec.Priority != ob.spec.Priority {
			return cmp.Compare(oa.spec.Priority, ob.spec.Priority)
		}
		if oa.seq != ob.seq {
			if oa.seq > ob.seq {
				return -1
			}
			return 1
		}
		return int(b - a)
	})
	for _, idx := range behind {
		if resource.Assign(lack, coming, q.cfg.Matching).Complete() {
			return
		}
		s := &q.slots[idx]
		trial := append(slices.Clone(coming), resource.Count{Profile: s.slot.Profile, N: 1})
		if resource.Assign(lack, trial, q.cfg.Matching).Matched <= resource.Assign(lack, coming, q.cfg.Matching).Matched {
			continue // this slot serves none of what is lacking
		}
		coming = trial
		s.state = slotReclaiming
		owner := q.jobs[s.owner]
		owner.reclaims++
		owner.out = append(owner.out, slotpool.Reclaim{Slot: s.slot.ID})
		q.log.Debug("slot reclaimed", zap.String("for", first.spec.Name), zap.String("from", owner.spec.Name), zap.Int64("slot", int64(s.slot.ID)))
	}
}

// reclaimable returns the free slots and those being reclaimed (coming),
// and the slots of jobs behind first that could be reclaimed for it; ok
// when reclaiming some of them could complete what first lacks and what is
// coming does not already.
func (q *Queues) reclaimable(first *job, lack []resource.Count) (coming []resource.Count, behind []int32, ok bool) {
	coming, _ = q.freeCounts()
	var limits map[JobID]int // fair share, per owner: how many more of its slots may be taken
	for i := range q.slots {
		s := &q.slots[i]
		switch {
		case s.state == slotReclaiming:
			coming = append(coming, resource.Count{Profile: s.slot.Profile, N: 1})
		case s.state == slotGranted && s.owner != first.id && !q.ahead(q.jobs[s.owner], first):
			if q.jobs[s.owner].queue != first.queue || first.queue.cfg.Policy != FairShare {
				behind = append(behind, int32(i))
				continue
			}
			if limits == nil {
				limits = map[JobID]int{}
			}
			n, seen := limits[s.owner]
			if !seen {
				n = q.yieldable(q.jobs[s.owner], first)
			}
			if n > 0 {
				behind = append(behind, int32(i))
				n--
			}
			limits[s.owner] = n
		}
	}
	if resource.Assign(lack, coming, q.cfg.Matching).Complete() {
		return coming, behind, true // enough is free or on its way
	}
	possible := slices.Clone(coming)
	for _, idx := range behind {
		possible = append(possible, resource.Count{Profile: q.slots[idx].slot.Profile, N: 1})
	}
	if !resource.Assign(lack, possible, q.cfg.Matching).Complete() {
		q.log.Debug("job waits for slots no reclaim can free (drivers, jobs ahead)", zap.String("job", first.spec.Name))
		return nil, nil, false
	}
	return coming, behind, true
}

// yieldable is how many slots victim v may give up for claimant c. Under
// fair share only as many as leave v behind c as c stands: a slot taken
// beyond that would be granted back to v when it comes free, and
// reclaimed again, forever (c's ask, once complete, is granted at once,
// while c is still behind v). Otherwise all.
func (q *Queues) yieldable(v, c *job) int {
	if v.queue != c.queue || v.queue.cfg.Policy != FairShare {
		return v.granted
	}
	k, ck := 0, keyOf(c)
	for k < v.granted && compareKeys(keyWith(v, v.granted-k-1), ck) >= 0 {
		k++
	}
	return k
}

// ahead reports whether job a is ahead of job b in grant order.
func (q *Queues) ahead(a, b *job) bool {
	if a.queue != b.queue {
		return a.queue.cfg.Name < b.queue.cfg.Name
	}
	return compareKeys(keyOf(a), keyOf(b)) < 0
}

// release frees a slot a job's pool gave back.
func (q *Queues) release(j *job, idx int32) {
	s := &q.slots[idx]
	if s.state == slotReclaiming {
		j.reclaims--
	}
	j.granted--
	q.put(idx)
}

// end releases everything of a job that ended and moves it on.
func (q *Queues) end(now time.Time, j *job, failed error) {
	q.now = now
	for i := range q.slots {
		if s := &q.slots[i]; s.state != slotFree && s.owner == j.id {
			q.put(int32(i))
		}
	}
	j.granted, j.reclaims, j.asks, j.out = 0, 0, nil, nil
	j.driver = false
	j.queue.startingJobs = slices.DeleteFunc(j.queue.startingJobs, func(x *job) bool { return x == j })
	if failed != nil {
		j.err = failed
		q.move(j, JobFailing, failed.Error())
		q.move(j, JobFailed, "its slots are back")
	} else {
		q.move(j, JobCompleting, "finished")
		q.move(j, JobCompleted, "its slots are back")
	}
	q.updateOrder(j)
	q.decide()
}
