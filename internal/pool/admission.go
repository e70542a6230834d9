package slotpool

import (
	"fmt"
	"slices"
	"time"

	"github.com/regionsched/regionsched/resource"
)

// The admission adapter: how the pool declares its demand to a
// queue-level admission (YuniKorn-style) and gets slots granted and taken
// back, as messages, so that both sides stay deterministic state machines.
// Whoever owns the loop (a Link, the scheduler's driver, a simulator)
// carries them: the pool's ToAdmission messages come out of Pool.Ready as
// events and go to Admission.Handle; the admission's FromAdmission
// messages come out of Admission.Ready and go to Pool.Admit.
//
// Shaped after YuniKorn's scheduler interface (si.proto): an Ask is an
// allocation ask carrying a gang (task groups: how many slots of which
// profile, all-or-nothing); an AskRelease withdraws it; a SlotRelease
// gives a slot back with a termination reason; the admission answers with
// Grants (new allocations), Revokes (allocations it takes back, with a
// reason) and ReleaseConfirmed (the echo of a SlotRelease). A Revoke is in
// turn confirmed by the pool with a SlotRelease of the same reason.
//
// The pool's side of the protocol:
//
//   - With Config.Admission, every bulk that has to wait declares demand
//     with all-or-nothing gangs. A younger bulk asks once, at Submit, for
//     all its requests, so that the admission can start providing for
//     several regions at once (FLIP-119's parallel slot requests). The
//     head (the oldest waiting bulk) keeps exactly one outstanding ask for
//     exactly what it lacks: when it becomes the head, and whenever what it
//     lacks changes otherwise than by a grant of its own ask (it absorbed a
//     released slot, or lost a held one), its asks are withdrawn and a new
//     one is made. What it lacks is computed over its held slots plus
//     hypothetical ones, least demanding profiles first, so any slots that
//     serve the ask complete the head whichever of its requests its held
//     slots serve now. So the ask the pool most needs is never stale, and
//     never asks for what the pool already holds.
//   - Granted slots are offered like any other slot: they go to the oldest
//     waiting bulk that can use them, not necessarily to the bulk whose ask
//     they answer (FIFO physical assignment, FLINK-17019). A younger bulk
//     whose granted slots went to the head asks again, for what it then
//     lacks, when it becomes the head itself.
//   - When a bulk stops waiting (fulfilled, canceled, failed), its asks not
//     yet fully granted are withdrawn with an AskRelease (ReasonStopped, or
//     ReasonTimeout for a timed-out bulk); slots granted later are surplus
//     and stay in the pool as free slots.
//   - A free slot goes back to the admission (SlotRelease, ReasonStopped)
//     only with Config.IdleTimeout: after it has been free that long while
//     no waiting bulk has a request it can serve. By default the pool keeps
//     idle slots. A slot being released stays in the pool as "releasing"
//     (not usable, its id still taken) until ReleaseConfirmed arrives.
//   - Revoke (preemption, or a placeholder replaced): the slot leaves at
//     once; if a task runs in it, a Lost event with the admission's reason
//     tells the caller to fail the task over. The pool confirms with a
//     SlotRelease echo.
//   - Reclaim (non-preemptive reclaim): the slot leaves as soon as no task
//     runs in it (at once if free or held), with a SlotRelease
//     (ReasonPreempted); until then it does not count as reusable. An
//     admission with a reclaim timeout sends a Revoke when it expires.
//   - Capacity declares what the admission could ever grant this pool; a
//     bulk that cannot fit it fails at once (see Pool.SetCapacity).
//
// Multi-job policies (fifo, priority, fair share, StateAware, gangs with
// placeholders, preemption with reclaim timeouts) live behind Admission:
// they decide whom to grant, revoke or reclaim, and the pool needs no
// change. Placeholders are the admission's own business: it grants the
// real slots when the gang is reserved, or grants placeholder slots and
// later revokes them with ReasonPlaceholderReplaced after granting the
// real ones.

// Reason says why a slot or an ask is given up.
type Reason uint8

// The reasons, after YuniKorn's TerminationType.
const (
	// ReasonStopped: no longer needed (STOPPED_BY_RM).
	ReasonStopped Reason = iota + 1
	// ReasonTimeout: given up after a timeout (TIMEOUT).
	ReasonTimeout
	// ReasonPreempted: taken back by the admission (PREEMPTED_BY_SCHEDULER).
	ReasonPreempted
	// ReasonPlaceholderReplaced: a placeholder slot swapped for a real one
	// (PLACEHOLDER_REPLACED).
	ReasonPlaceholderReplaced
	// ReasonLost: the slot's machine is gone (Pool.Lose). Only in Lost
	// events, never sent to an admission.
	ReasonLost
)

var reasonNames = [...]string{"", "stopped", "timeout", "preempted", "placeholder-replaced", "lost"}

// String returns "stopped", "timeout", "preempted", "placeholder-replaced"
// or "lost".
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// AskID names an ask; the pool numbers them 1, 2, ...
type AskID int64

// TaskGroup is MinMembers slots of one profile (YuniKorn's task group:
// minMember pods of minResource each).
type TaskGroup struct {
	Profile    resource.Profile
	MinMembers int
}

// Gang is the demand of one ask.
type Gang struct {
	Groups []TaskGroup
	// AllOrNothing asks the admission to grant every group's MinMembers
	// together or nothing; otherwise it may grant slots as they come.
	AllOrNothing bool
}

// Counts returns the gang as resource counts, for resource.Assign.
func (g Gang) Counts() []resource.Count {
	return g.AppendCounts(make([]resource.Count, 0, len(g.Groups)))
}

// AppendCounts appends Counts to dst and returns the extended slice, for
// a caller that reuses its storage.
func (g Gang) AppendCounts(dst []resource.Count) []resource.Count {
	for _, tg := range g.Groups {
		dst = append(dst, resource.Count{Profile: tg.Profile, N: tg.MinMembers})
	}
	return dst
}

// ToAdmission is a message from the pool to the admission: Ask,
// AskRelease or SlotRelease. They are also Events.
type ToAdmission interface {
	Event
	isToAdmission()
}

// Ask declares demand for the bulk Bulk.
type Ask struct {
	ID   AskID
	Bulk BulkID
	Gang Gang
	// Head marks the ask of the pool's head (its oldest waiting bulk): it
	// asks for exactly what the head lacks, so granting it completes the
	// head and a region deploys. An admission that breaks cross-job
	// deadlocks claims for this ask.
	Head bool
	// Holding lists the slots the bulk holds, unused, when it asks (only
	// the head holds slots; its ask is for what it lacks beyond them). An
	// admission that breaks cross-job deadlocks may reclaim these first:
	// they come back at once, and nothing runs in them.
	Holding []SlotID
}

// AskRelease withdraws what is not granted yet of an ask.
type AskRelease struct {
	ID     AskID
	Reason Reason
}

// SlotRelease gives a slot back to the admission, or confirms a Revoke.
type SlotRelease struct {
	Slot   SlotID
	Reason Reason
}

func (Ask) isEvent()               {}
func (AskRelease) isEvent()        {}
func (SlotRelease) isEvent()       {}
func (Ask) isToAdmission()         {}
func (AskRelease) isToAdmission()  {}
func (SlotRelease) isToAdmission() {}

// FromAdmission is a message from the admission to the pool: Grant,
// Revoke, Reclaim, ReleaseConfirmed or Capacity.
type FromAdmission interface{ isFromAdmission() }

// Grant gives slots to the pool in answer to an ask (Ask may name an ask
// already withdrawn: the slots are then surplus, but still offered).
type Grant struct {
	Ask   AskID
	Slots []Slot
}

// Revoke takes a slot back at once.
type Revoke struct {
	Slot   SlotID
	Reason Reason
}

// Reclaim asks for a slot back as soon as no task runs in it.
type Reclaim struct {
	Slot SlotID
}

// ReleaseConfirmed is the echo of a SlotRelease.
type ReleaseConfirmed struct {
	Slot   SlotID
	Reason Reason
}

// Capacity declares what the admission could ever grant the pool; nil
// Slots means unknown.
type Capacity struct {
	Slots []resource.Count
}

func (Grant) isFromAdmission()            {}
func (Revoke) isFromAdmission()           {}
func (Reclaim) isFromAdmission()          {}
func (ReleaseConfirmed) isFromAdmission() {}
func (Capacity) isFromAdmission()         {}

// Admission is the pool-facing side of a queue-level admission: a
// deterministic state machine like the pool. Package admission holds the
// implementations (StaticCluster for now); multi-job policies implement
// the same interface. Link couples a pool with one in process.
type Admission interface {
	// Handle takes one message from the pool. An error means the message
	// made no sense to the admission (it is ignored).
	Handle(now time.Time, msg ToAdmission) error
	// Ready returns the messages for the pool since the last call, in
	// order, and forgets them. The slice may be valid only until the next
	// call of Ready (an admission may reuse its storage): a caller reads
	// it before asking again, as Link does.
	Ready() []FromAdmission
	// Tick fires the admission's timers due at now.
	Tick(now time.Time)
	// NextDeadline returns when Tick next has work to do.
	NextDeadline() (time.Time, bool)
}

// Admit applies one message from the admission. Bad messages (unknown
// slot, duplicate granted slot id) return a *SlotError and change nothing.
func (p *Pool) Admit(now time.Time, msg FromAdmission) error {
	switch m := msg.(type) {
	case Grant:
		if err := p.checkNew("grant", m.Slots); err != nil {
			return err
		}
		p.grant(now, m)
	case Revoke:
		idx, ok := p.slotIndex(m.Slot)
		if !ok {
			return &SlotError{Op: "revoke", Slot: m.Slot, Err: ErrUnknownSlot}
		}
		confirm := p.slot(idx).state != SlotReleasing // else our release is the answer
		p.remove(now, idx, m.Reason)
		if confirm {
			p.emit(SlotRelease{Slot: m.Slot, Reason: m.Reason})
		}
	case Reclaim:
		idx, ok := p.slotIndex(m.Slot)
		if !ok {
			return &SlotError{Op: "reclaim", Slot: m.Slot, Err: ErrUnknownSlot}
		}
		p.reclaim(idx)
	case ReleaseConfirmed:
		idx, ok := p.slotIndex(m.Slot)
		if !ok {
			return &SlotError{Op: "confirm", Slot: m.Slot, Err: ErrUnknownSlot}
		}
		if p.slot(idx).state != SlotReleasing {
			return &SlotError{Op: "confirm", Slot: m.Slot, Err: ErrSlotNotReleasing}
		}
		p.nRelease--
		p.dropSlot(idx)
	case Capacity:
		p.SetCapacity(now, m.Slots)
		return nil
	default:
		return fmt.Errorf("slotpool: admit %T: %w", msg, ErrUnknownMessage)
	}
	p.settle(now)
	return nil
}

// grant offers granted slots and counts them against their ask.
func (p *Pool) grant(now time.Time, m Grant) {
	if a, ok := p.asks[m.Ask]; ok {
		a.owed -= len(m.Slots)
		if a.owed <= 0 {
			p.dropAsk(a)
		}
	}
	for _, s := range m.Slots {
		idx, rec := p.addSlot(s)
		p.makeAvailable(now, idx, rec)
	}
}

// reclaim gives a slot back as soon as no task runs in it.
func (p *Pool) reclaim(idx int32) {
	s := p.slot(idx)
	switch s.state {
	case SlotFree, SlotHeld:
		p.detach(idx, ReasonPreempted)
		p.startRelease(idx, ReasonPreempted)
	case SlotInUse:
		if !s.reclaimed {
			s.reclaimed = true
			if !s.unbounded {
				p.fixSlot(s.profile)
			}
		}
	}
}

// startRelease sends a slot that left the pool's slots back to the
// admission; it stays "releasing" until confirmed.
func (p *Pool) startRelease(idx int32, reason Reason) {
	s := p.slot(idx)
	s.state = SlotReleasing
	p.nRelease++
	p.emit(SlotRelease{Slot: s.id, Reason: reason})
}

// ask is an outstanding ask of the ledger.
type ask struct {
	id     AskID
	bulk   *bulk
	groups []TaskGroup
	owed   int // slots asked and not granted yet
}

// askFor declares the demand of a younger bulk that has to wait after
// Submit: all its requests (the head's ask is kept by syncHeadAsk).
func (p *Pool) askFor(b *bulk) {
	if !p.cfg.Admission || p.head == b {
		return
	}
	groups := make([]TaskGroup, len(b.shape.demand))
	for c, d := range b.shape.demand {
		groups[c] = TaskGroup{Profile: d.Profile, MinMembers: d.N}
	}
	p.newAsk(b, groups)
}

// syncHeadAsk keeps the head's demand current: when its held slots or
// the head itself changed, what it lacks is recomputed, and unless its one
// outstanding ask asks for exactly that, its asks are withdrawn and a new
// one is made.
func (p *Pool) syncHeadAsk() {
	h := p.head
	if !p.cfg.Admission || h == nil || (h == p.synced && p.heldVersion == p.syncedVersion) {
		return
	}
	p.synced, p.syncedVersion = h, p.heldVersion
	lack := p.headLack()
	if len(h.asks) == 1 && slices.Equal(h.asks[0].groups, lack) {
		return
	}
	p.withdrawAsks(h, ReasonStopped)
	p.newAsk(h, lack)
}

// headLack returns the requests whose slots would complete the head
// together with the slots it holds: grown one request at a time with
// resource.Matched over the held slots plus hypothetical slots of request
// profiles, least demanding first. Any slots serving these groups then
// complete the head, whichever requests its held slots serve now. (An
// Unknown request is tried with a zero-size slot, which serves only it.)
func (p *Pool) headLack() []TaskGroup {
	sh := p.head.shape
	var groups []TaskGroup
	if p.nHeld == 0 {
		for _, d := range sh.demand {
			groups = append(groups, TaskGroup{Profile: d.Profile, MinMembers: d.N})
		}
		return groups
	}
	if len(sh.demand) == 1 { // one profile: the head uses every slot it holds (offerToHead and rebuildHead keep it so; CheckInvariants checks it)
		if lack := sh.size - p.nHeld; lack > 0 {
			groups = append(groups, TaskGroup{Profile: sh.demand[0].Profile, MinMembers: lack})
		}
		return groups
	}
	base := slices.Clone(p.supply(true, false, false))
	extra := make([]int, len(sh.demand))
	for matched := p.nHeld; matched < sh.size; {
		grew := false
		for i := len(sh.fitOrder) - 1; i >= 0 && !grew; i-- {
			c := sh.fitOrder[i]
			if extra[c] == sh.demand[c].N {
				continue
			}
			extra[c]++
			sup := base
			for k, n := range extra {
				if n > 0 {
					sup = append(sup, resource.Count{Profile: hypothetical(sh.demand[k].Profile), N: n})
				}
			}
			if m := resource.Matched(sh.demand, sup, p.cfg.Matching); m > matched {
				matched, grew = m, true
			} else {
				extra[c]--
			}
		}
		if !grew {
			break // cannot happen: one more slot of an unserved request's profile always helps
		}
	}
	for c, n := range extra {
		if n > 0 {
			groups = append(groups, TaskGroup{Profile: sh.demand[c].Profile, MinMembers: n})
		}
	}
	return groups
}

// hypothetical is the profile of a slot that serves requests of profile
// pr and as few others as possible.
func hypothetical(pr resource.Profile) resource.Profile {
	if pr.IsUnknown() {
		return resource.New(0, 0)
	}
	return pr
}

// newAsk records and emits an all-or-nothing ask for b.
func (p *Pool) newAsk(b *bulk, groups []TaskGroup) {
	a := &ask{id: p.nextAsk, bulk: b, groups: groups}
	p.nextAsk++
	for _, g := range groups {
		a.owed += g.MinMembers
	}
	p.asks[a.id] = a
	b.asks = append(b.asks, a)
	msg := Ask{ID: a.id, Bulk: b.id, Gang: Gang{Groups: slices.Clone(groups), AllOrNothing: true}} // the caller owns it
	if b == p.head {
		msg.Head = true
		for pr := range p.profiles {
			for _, idx := range p.profiles[pr].held {
				msg.Holding = append(msg.Holding, p.slot(idx).id)
			}
		}
	}
	p.emit(msg)
}

// dropAsk forgets a fully granted ask.
func (p *Pool) dropAsk(a *ask) {
	delete(p.asks, a.id)
	a.bulk.asks = slices.DeleteFunc(a.bulk.asks, func(x *ask) bool { return x == a })
}

// withdrawAsks releases the outstanding asks of a bulk.
func (p *Pool) withdrawAsks(b *bulk, reason Reason) {
	for _, a := range b.asks {
		delete(p.asks, a.id)
		p.emit(AskRelease{ID: a.id, Reason: reason})
	}
	b.asks = b.asks[:0]
}
