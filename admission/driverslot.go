package admission

import (
	"fmt"
	"slices"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/resource"
)

// Which slot a driver takes. A driver keeps its slot until its job ends,
// so on a cluster of several slot profiles the slot it takes may be one
// that a region of its own job needs: a driver that fits a small slot
// but took the only large one, free when it was granted, leaves the
// job's region that needs the large slot waiting beside it for ever.
// So a driver takes only a slot whose leaving the cluster as configured
// still leaves room for each of its job's regions (JobSpec.Regions), and
// waits for one to come back rather than take another; a job whose
// driver no slot serves so is rejected at once, and one whose driver's
// slot leaves them too little once slots are removed fails. The rule
// applies wherever slots are counted toward a waiting driver
// (driverMask): the slot serve grants it (driverProfileIn), the free
// slots it may take under its queues' maxima (freeToward), what its
// claim has coming (countClaim) and picks, what a preemption counts and
// takes for it (coming, pickVictims), whether its first regions can
// follow it (driverFollows) and whether it is wedged. A slot coming
// back to a claim for a driver that may not take it any more is kept
// for nobody (handOver), and a claim it no longer completes goes
// (countClaim). Where every profile would be ruled out, none is: the
// driver runs where it can.

// driverSlots returns, per profile index, whether j's driver may take a
// slot of that profile (see above); nil if it may take any: no driver,
// no regions listed, a single profile, or none ruled out. Cached per
// job until the cluster's slots change.
func (q *Queues) driverSlots(j *job) []bool {
	if !j.driver || len(j.spec.Regions) == 0 || len(q.profiles) < 2 {
		return nil
	}
	if j.driverOKGen == q.capGen+1 {
		return j.driverOK
	}
	capacity := q.configuredCapacity()
	ok := make([]bool, len(q.profiles))
	some, all := false, true
	for p, prof := range q.profiles {
		serves := q.cfg.Matching.Serves(prof, *j.spec.Driver)
		ok[p] = !serves || q.leavesRoom(j, capacity, prof) == ""
		some = some || (serves && ok[p])
		all = all && ok[p]
	}
	if all || !some {
		ok = nil
	}
	j.driverOK, j.driverOKGen = ok, q.capGen+1
	return ok
}

// driverMask is driverSlots for a job whose driver waits for its slot
// (not as part of a gang that waits: the gang counts it); nil otherwise.
func (q *Queues) driverMask(j *job) []bool {
	if !j.driver || j.hasSlot || j.gangWaits() {
		return nil
	}
	return q.driverSlots(j)
}

// maskOut zeroes the counts n (per profile) of the profiles mask rules
// out; a nil mask rules out none.
func maskOut(n []int, mask []bool) {
	for p := range mask {
		if !mask[p] && p < len(n) {
			n[p] = 0
		}
	}
}

// configuredCapacity is the cluster as configured (Config.Cluster, else
// the slots): what a job is checked against when it is submitted.
func (q *Queues) configuredCapacity() []resource.Count {
	if q.cfg.Cluster != nil {
		return q.cfg.Cluster
	}
	return q.capacity
}

// leavesRoom checks that capacity less one slot of profile prof still
// serves each of j's regions; it returns why not ("" if it does). A
// profile capacity does not list leaves it as it is.
func (q *Queues) leavesRoom(j *job, capacity []resource.Count, prof resource.Profile) string {
	rest, ok := lessOne(capacity, prof)
	if !ok {
		return ""
	}
	for _, r := range j.spec.Regions {
		if a := resource.Assign(r.Slots, rest, q.cfg.Matching); !a.Complete() {
			return fmt.Sprintf("%s needs %s at once, and the rest of the queue's cluster can never give %s: missing %s",
				r.Name, plural.Count(sumCounts(r.Slots), "slot"), plural.Of(sumCounts(r.Slots), "it", "them"), a.MissingString())
		}
	}
	return ""
}

// lessOne returns a copy of capacity with one slot of profile prof less;
// false if capacity has none.
func lessOne(capacity []resource.Count, prof resource.Profile) ([]resource.Count, bool) {
	i := slices.IndexFunc(capacity, func(c resource.Count) bool { return c.Profile == prof && c.N > 0 })
	if i < 0 {
		return nil, false
	}
	rest := slices.Clone(capacity)
	rest[i].N--
	return rest, true
}

// fitsDriverSlot checks that some slot of the cluster as configured
// serves j's driver and leaves room for each of its regions (see above);
// once its driver has its slot, that slot.
func (q *Queues) fitsDriverSlot(j *job) (string, bool) {
	if !j.driver || len(j.spec.Regions) == 0 {
		return "", true
	}
	capacity := q.configuredCapacity()
	if j.hasSlot {
		p := q.slots[j.driverSlot].slot.Profile
		if w := q.leavesRoom(j, capacity, p); w != "" {
			return fmt.Sprintf("its driver's slot, of %v, leaves too little for its regions: %s", p, w), false
		}
		return "", true
	}
	why := ""
	for _, c := range capacity {
		if c.N == 0 || !q.cfg.Matching.Serves(c.Profile, *j.spec.Driver) {
			continue
		}
		w := q.leavesRoom(j, capacity, c.Profile)
		if w == "" {
			return "", true
		}
		if why == "" {
			why = fmt.Sprintf("its driver leaves too little for its regions in any slot it fits: in a slot of %v, %s", c.Profile, w)
		}
	}
	return why, why == ""
}

// driverFollows is startFollows for a driver that may take only the
// slots of the profiles of mask: one of them, counted in have, serves
// the driver, and the rest its first regions, as far as the cluster
// less that slot can hold them (startNeed's cap, with the driver there).
func (q *Queues) driverFollows(j *job, have []int, mask []bool) bool {
	for p, ok := range mask {
		if !ok || have[p] == 0 || !q.cfg.Matching.Serves(q.profiles[p], *j.spec.Driver) {
			continue
		}
		rest, ok := lessOne(q.capacity, q.profiles[p])
		if !ok {
			rest = q.capacity
		}
		n := min(1+resource.Matched(j.spec.Start, rest, q.cfg.Matching), j.queue.capOf())
		have[p]--
		m := q.matched(j.spec.Start, have)
		have[p]++
		if m+1 >= n {
			return true
		}
	}
	return false
}

// checkDriverSlots checks that no driver granted at this instant took a
// slot whose leaving the cluster as configured leaves a region of its
// job no room, while a slot of another profile that serves it would
// have left them all room (see above). It judges each profile afresh
// (leavesRoom), not by the cached driverSlots.
func (q *Queues) checkDriverSlots() error {
	capacity := q.configuredCapacity()
	for _, j := range q.jobs {
		if j == nil || !j.active() || !j.hasSlot || !j.driverAt.Equal(q.now) || len(j.spec.Regions) == 0 {
			continue
		}
		took := q.slots[j.driverSlot].slot.Profile
		why := q.leavesRoom(j, capacity, took)
		if why == "" {
			continue
		}
		for _, c := range capacity {
			if c.N > 0 && c.Profile != took && q.cfg.Matching.Serves(c.Profile, *j.spec.Driver) && q.leavesRoom(j, capacity, c.Profile) == "" {
				return fmt.Errorf("admission: the driver of job %s took %s at %v, a slot its regions need (%s), while a slot of %v would leave them room",
					j.spec.Name, q.slotName(j.driverSlot), q.now, why, c.Profile)
			}
		}
	}
	return nil
}
