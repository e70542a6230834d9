package admission

import (
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
			}
		}
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
	coming, _ := q.freeCounts()
	var behind []int32 // slots of jobs behind first that could be reclaimed
	for i := range q.slots {
		s := &q.slots[i]
		switch {
		case s.state == slotReclaiming:
			coming = append(coming, resource.Count{Profile: s.slot.Profile, N: 1})
		case s.state == slotGranted && s.owner != first.id && !q.ahead(q.jobs[s.owner], first):
			behind = append(behind, int32(i))
		}
	}
	if resource.Assign(lack, coming, q.cfg.Matching).Complete() {
		return // enough is free or on its way
	}
	possible := slices.Clone(coming)
	for _, idx := range behind {
		possible = append(possible, resource.Count{Profile: q.slots[idx].slot.Profile, N: 1})
	}
	if !resource.Assign(lack, possible, q.cfg.Matching).Complete() {
		q.log.Debug("job waits for slots no reclaim can free (drivers, jobs ahead)", zap.String("job", first.spec.Name))
		return
	}
	// Most recently submitted owners first, their highest slot first.
	slices.SortStableFunc(behind, func(a, b int32) int {
		oa, ob := q.jobs[q.slots[a].owner], q.jobs[q.slots[b].owner]
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
