package pool

import (
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// This file keeps, per shape, the verdict "fulfillable": can its requests
// be matched against the reusable slots (free, held, or used by bounded
// tasks; not used by unbounded or reclaimed tasks). Unfulfillable bulks
// have a timer; when it fires they fail.
//
// The verdict is re-checked only where it can change. Reusable slots that
// arrive can only turn unfulfillable into fulfillable, and only if they
// serve one of the shape's profiles and are at least as many as the
// requests missing at the last check. Reusable slots that go away can only
// turn fulfillable into unfulfillable, and only if the cached matching
// used more slots of that profile than remain.

// reusableAdded records that a slot of profile pr became reusable.
func (p *Pool) reusableAdded(pr int32) {
	rec := &p.profiles.recs[pr]
	p.markReusableDirty(pr)
	rec.reusableAdds++
}

// reusableLost records that a reusable slot of profile pr went away.
func (p *Pool) reusableLost(pr int32) {
	p.markReusableDirty(pr)
	p.profiles.recs[pr].reusableLoss = true
}

func (p *Pool) markReusableDirty(pr int32) {
	rec := &p.profiles.recs[pr]
	if rec.reusableAdds == 0 && !rec.reusableLoss {
		p.dirtyReusable = append(p.dirtyReusable, pr)
	}
}

// refreshFulfillable folds the reusable-slot changes since the last call
// into the shapes' verdicts.
func (p *Pool) refreshFulfillable(now time.Time) {
	if len(p.dirtyReusable) == 0 {
		return
	}
	for _, s := range p.shapes {
		recheck := false
		if s.fulfillable {
			for _, pr := range p.dirtyReusable {
				if p.profiles.recs[pr].reusableLoss && int(s.uses(pr)) > p.profiles.recs[pr].reusable() {
					recheck = true
					break
				}
			}
		} else {
			for _, pr := range p.dirtyReusable {
				if n := p.profiles.recs[pr].reusableAdds; n > 0 && p.profiles.relevant(pr, s) {
					s.addsSince += n
				}
			}
			recheck = s.addsSince >= s.missing
		}
		if recheck {
			p.checkFulfillable(now, s)
		}
	}
	for _, pr := range p.dirtyReusable {
		p.profiles.recs[pr].reusableAdds = 0
		p.profiles.recs[pr].reusableLoss = false
	}
	p.dirtyReusable = p.dirtyReusable[:0]
}

// checkFulfillable computes the verdict of a shape with resource.Assign
// and starts or cancels the timers of its bulks when it flips.
func (p *Pool) checkFulfillable(now time.Time, s *shape) {
	if bound := p.classBound(s, true); bound > 0 {
		p.markUnfulfillable(now, s, bound)
		return
	}
	a := p.profiles.assign(s.demand, p.profiles.supply(false, false, true))
	if a.Complete() {
		if !s.fulfillable {
			s.fulfillable = true
			for b := s.bulks.Front(); b != nil; b = s.bulks.Next(b) {
				if b.deadline != nil {
					p.timers.cancel(b.deadline)
					b.deadline = nil
				}
			}
		}
		s.use = zeroed(s.use, len(p.profiles.recs))
		for _, pair := range a.Pairs {
			s.use[p.profiles.supplyProf[pair.Slot]] += int32(pair.N)
		}
		return
	}
	p.markUnfulfillable(now, s, s.size-a.Matched)
}

// markUnfulfillable records that s misses (at least) missing requests and
// starts its bulks' timers if it was fulfillable.
func (p *Pool) markUnfulfillable(now time.Time, s *shape, missing int) {
	s.missing, s.addsSince = missing, 0
	if s.fulfillable {
		s.fulfillable = false
		for b := s.bulks.Front(); b != nil; b = s.bulks.Next(b) {
			p.startTimeout(now, b)
		}
	}
}

// startTimeout arms the fulfillability timeout of a bulk.
func (p *Pool) startTimeout(now time.Time, b *bulk) {
	if b.deadline != nil {
		p.timers.cancel(b.deadline)
		b.deadline = nil
	}
	if p.cfg.Timeout == slotpool.NoTimeout {
		return
	}
	b.deadline = p.timers.add(now.Add(p.cfg.Timeout), b, -1)
}

// missingNow returns what a shape misses against the reusable slots.
func (p *Pool) missingNow(s *shape) []resource.Count {
	return resource.Assign(s.demand, p.profiles.supply(false, false, true), p.cfg.Matching).Missing
}

// fail ends a waiting bulk with a NoResourceAvailableError; the slots it
// held go back to the free slots.
func (p *Pool) fail(now time.Time, b *bulk, err *slotpool.NoResourceAvailableError, reason slotpool.Reason) {
	if p.head == b {
		p.returnHeld(now)
	}
	p.leaveWaiting(b, reason)
	p.retire(b, BulkFailed)
	p.emit(Failed{Bulk: b.id, Err: err})
	p.logDebug("bulk failed", b.id)
}

// fitsCapacity reports whether a shape fits the declared capacity (always
// true when none is declared), caching the answer per capacity version.
func (p *Pool) fitsCapacity(s *shape) bool {
	if p.capacity == nil {
		return true
	}
	if s.capVersion != p.capVersion {
		s.capVersion = p.capVersion
		s.capFits = resource.Matched(s.demand, p.capacity, p.cfg.Matching) == s.size
	}
	return s.capFits
}

// neverFits builds the error of a bulk that cannot fit the capacity.
func (p *Pool) neverFits(b *bulk) *slotpool.NoResourceAvailableError {
	a := resource.Assign(b.shape.demand, p.capacity, p.cfg.Matching)
	return &slotpool.NoResourceAvailableError{Bulk: b.id, Missing: a.Missing, Never: true}
}
