package pool

import (
	"github.com/regionsched/regionsched/resource"
)

// This file keeps, per shape, the verdict "fulfillable": can its requests
// be matched against the reusable slots (free, held, or used by bounded
// tasks; not used by unbounded or reclaimed tasks). The pool arms a timer
// for the bulks of an unfulfillable shape; when it fires they fail.
//
// The verdict is re-checked only where it can change. Reusable slots that
// arrive can only turn unfulfillable into fulfillable, and only if they
// serve one of the shape's profiles and are at least as many as the
// requests missing at the last check. Reusable slots that go away can only
// turn fulfillable into unfulfillable, and only if the cached matching
// used more slots of that profile than remain.

// reusableAdded records that a slot of profile pr became reusable.
func (c *shapeCache) reusableAdded(pr int32) {
	rec := &c.profiles.recs[pr]
	c.markDirty(pr)
	rec.reusableAdds++
}

// reusableLost records that a reusable slot of profile pr went away.
func (c *shapeCache) reusableLost(pr int32) {
	c.markDirty(pr)
	c.profiles.recs[pr].reusableLoss = true
}

// markDirty lists profile pr among the changed ones, once.
func (c *shapeCache) markDirty(pr int32) {
	rec := &c.profiles.recs[pr]
	if rec.reusableAdds == 0 && !rec.reusableLoss {
		c.dirty = append(c.dirty, pr)
	}
}

// refresh folds the reusable-slot changes since the last call into the
// verdicts of the live shapes; those that flip are in c.flipped.
func (c *shapeCache) refresh() {
	if len(c.dirty) == 0 {
		return
	}
	recs := c.profiles.recs
	for _, s := range c.live {
		recheck := false
		if s.fulfillable {
			for _, pr := range c.dirty {
				if recs[pr].reusableLoss && int(s.uses(pr)) > recs[pr].reusable() {
					recheck = true
					break
				}
			}
		} else {
			for _, pr := range c.dirty {
				if n := recs[pr].reusableAdds; n > 0 && c.profiles.relevant(pr, s) {
					s.addsSince += n
				}
			}
			recheck = s.addsSince >= s.missing
		}
		if recheck {
			c.recheck(s)
		}
	}
	for _, pr := range c.dirty {
		c.profiles.recs[pr].reusableAdds = 0
		c.profiles.recs[pr].reusableLoss = false
	}
	c.dirty = c.dirty[:0]
}

// recheck computes the verdict of a shape with resource.Assign; if it
// flips, the shape goes to c.flipped.
func (c *shapeCache) recheck(s *shape) {
	if bound := c.classBound(s, true); bound > 0 {
		c.markUnfulfillable(s, bound)
		return
	}
	t := c.profiles
	a := t.assign(s.demand, t.supply(false, false, true))
	if a.Complete() {
		if !s.fulfillable {
			s.fulfillable = true
			c.flipped = append(c.flipped, s)
		}
		s.use = zeroed(s.use, len(t.recs))
		for _, pair := range a.Pairs {
			s.use[t.supplyProf[pair.Slot]] += int32(pair.N)
		}
		return
	}
	c.markUnfulfillable(s, s.size-a.Matched)
}

// markUnfulfillable records that s misses (at least) missing requests;
// if it was fulfillable, it goes to c.flipped.
func (c *shapeCache) markUnfulfillable(s *shape, missing int) {
	s.missing, s.addsSince = missing, 0
	if s.fulfillable {
		s.fulfillable = false
		c.flipped = append(c.flipped, s)
	}
}

// missingNow returns what a shape misses against the reusable slots.
func (c *shapeCache) missingNow(s *shape) []resource.Count {
	return resource.Assign(s.demand, c.profiles.supply(false, false, true), c.profiles.matching).Missing
}
