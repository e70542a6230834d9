package pool

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Config configures a Pool: the settings of slotpool.Config, whether an
// admission answers the pool's demand, and the logger.
type Config struct {
	// Matching, Timeout, IdleTimeout and ReturnFreed are as in
	// slotpool.Config.
	Matching    resource.Matching
	Timeout     time.Duration
	IdleTimeout time.Duration
	ReturnFreed bool
	// Admission makes the pool declare its demand: an Ask event for every
	// bulk that has to wait, AskRelease when it no longer needs it. Without
	// it no Ask/AskRelease events are emitted, and ReturnFreed is ignored.
	Admission bool
	// Logger receives debug logs; nil means zap.NewNop().
	Logger *zap.Logger
}

// Pool is the deterministic slot pool: no goroutines, no clock. Every
// mutation takes the current time as an argument; outputs are drained
// with Ready. It is not safe for concurrent use (package scheduler's driver
// owns one on its event loop).
type Pool struct {
	cfg   Config
	log   *zap.Logger
	debug bool // log takes debug entries

	profiles profileTable

	slotChunks [][]slotRec                        // the slot table, see slot
	nSlots     int32                              // slot indexes ever used
	slotDense  denseTable[slotpool.SlotID, int32] // slot id -> table index + 1 (see slotIndex)
	recycled   []int32
	nodes      map[int32]string // table index -> Node, for the slots that name one
	nFree      int
	nHeld      int
	nInUse     int
	nRelease   int

	// bulks holds the live bulks: waiting, or fulfilled with slots in
	// use. A bulk that failed, was canceled, or whose last slot came back
	// is retired: forgotten at once, its id free for reuse.
	// Its values are 1 + the records' handles in bulkRecs (see liveBulk).
	bulks denseTable[slotpool.BulkID, int32]
	queue bulkList // waiting bulks, oldest first
	seq   uint64
	// shapes holds the shapes of the waiting bulks and their verdicts.
	shapes shapeCache

	head       *bulk // oldest waiting bulk, the only one holding slots
	headServed []int // per class of the head: requests its held set serves
	headPairs  []headPair

	timers timerHeap

	asks    map[slotpool.AskID]*ask
	nextAsk slotpool.AskID
	// specAsks are the outstanding speculative asks (AskSpeculative),
	// specGranted those granted since SpeculativeGrants.
	specAsks    map[slotpool.AskID]specAsk
	specGranted []SpeculativeGrant
	// heldVersion changes whenever the head's held set does; syncHeadAsk
	// recomputes the head's demand only when it or the head changed.
	heldVersion   uint64
	synced        *bulk
	syncedVersion uint64

	// bulkRecs holds the bulk records, live and retired, for reuse by
	// Submit; idSlab is carved into the Slots of Fulfilled events (the
	// caller keeps those).
	bulkRecs         bulkStore
	requestsSlab     []bulkRequests // the many records of bulks to come (see newBulk)
	requestsSlabSize int
	idSlab           []slotpool.SlotID
	idSlabSize       int

	dirtyFree []int32
	events    []Note

	// scratch buffers
	wantBuf   []int
	startBuf  []int32
	orderBuf  []int32
	nextBuf   []int32
	pairBuf   []resource.Pair
	idSortBuf []slotpool.SlotID // checkNew's sorted ids
}

// New returns an empty pool.
func New(cfg Config) *Pool {
	if cfg.Timeout <= 0 && cfg.Timeout != slotpool.NoTimeout {
		cfg.Timeout = slotpool.DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	p := &Pool{
		cfg:      cfg,
		profiles: newProfileTable(cfg.Matching),
		log:      cfg.Logger,
		debug:    cfg.Logger.Core().Enabled(zapcore.DebugLevel),
		asks:     make(map[slotpool.AskID]*ask),
		nextAsk:  1,
	}
	p.shapes = newShapeCache(&p.profiles)
	return p
}

// Ready returns the events since the last call, oldest first, and forgets
// them. The caller owns the slice.
func (p *Pool) Ready() []Event { return events(p.swapEvents(nil)) }

// events returns notes as events (each Fulfilled boxed).
func events(notes []Note) []Event {
	if len(notes) == 0 {
		return nil
	}
	evs := make([]Event, len(notes))
	for i, n := range notes {
		evs[i] = n.Event()
	}
	return evs
}

// swapEvents returns the events since the last call and collects the
// next ones in spare's storage, emptied (Link's buffer that no caller
// reads any more).
func (p *Pool) swapEvents(spare []Note) []Note {
	ev := p.events
	clear(spare)
	p.events = spare[:0]
	return ev
}

// NextDeadline returns the earliest time at which Tick has work to do.
func (p *Pool) NextDeadline() (time.Time, bool) { return p.timers.next() }

// Tick fires every timeout due at now: unfulfillable bulks fail, idle
// slots go back to the admission.
func (p *Pool) Tick(now time.Time) {
	for t, ok := p.timers.popExpired(now); ok; t, ok = p.timers.popExpired(now) {
		if b := t.bulk; b != nil {
			b.deadline = nil
			err := &slotpool.NoResourceAvailableError{Bulk: b.id, Missing: p.shapes.missingNow(b.shape), Timeout: p.cfg.Timeout}
			p.fail(now, b, err, slotpool.ReasonTimeout)
			continue
		}
		p.idleExpired(now, t.slot)
	}
	p.settle(now)
}

// idleExpired gives an idle free slot back, unless a waiting bulk has a
// request it can serve.
func (p *Pool) idleExpired(now time.Time, idx int32) {
	s := p.slot(idx)
	s.idle = nil
	if p.shapes.serving(s.profile) {
		s.idle = p.timers.add(now.Add(p.cfg.IdleTimeout), nil, idx)
		return
	}
	p.removeFree(idx)
	p.leave(idx)
	p.startRelease(idx, slotpool.ReasonStopped)
}

// Offer adds slots to the pool. Each goes to the oldest waiting bulk that
// can use it. If any slot id is already in the pool (or repeated), nothing
// is offered and a *SlotError with ErrDuplicateSlot is returned.
func (p *Pool) Offer(now time.Time, slots ...slotpool.Slot) error {
	if err := p.checkNew("offer", slots); err != nil {
		return err
	}
	for _, s := range slots {
		idx, rec := p.addSlot(s)
		p.makeAvailable(now, idx, rec)
	}
	p.settle(now)
	return nil
}

// checkNew validates slot ids that are about to enter the pool. Repeats
// are looked for in a sorted copy of the ids (a cluster's thousands of
// slots, offered at once, cost no map); only when there is one does a
// scan in the given order find the slot to name.
func (p *Pool) checkNew(op string, slots []slotpool.Slot) error {
	if len(slots) > 1 {
		ids := p.idSortBuf[:0]
		for _, s := range slots {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		p.idSortBuf = ids
		for i := 1; i < len(ids); i++ {
			if ids[i] == ids[i-1] {
				return p.firstRepeat(op, slots)
			}
		}
	}
	for _, s := range slots {
		if _, ok := p.slotIndex(s.ID); ok {
			return &slotpool.SlotError{Op: op, Slot: s.ID, Err: slotpool.ErrDuplicateSlot}
		}
	}
	return nil
}

// firstRepeat returns the error of checkNew for slots that repeat an id:
// the first slot, in their order, already in the pool or seen before.
func (p *Pool) firstRepeat(op string, slots []slotpool.Slot) error {
	seen := make(map[slotpool.SlotID]struct{}, len(slots))
	for _, s := range slots {
		if _, ok := p.slotIndex(s.ID); ok {
			return &slotpool.SlotError{Op: op, Slot: s.ID, Err: slotpool.ErrDuplicateSlot}
		}
		if _, dup := seen[s.ID]; dup {
			return &slotpool.SlotError{Op: op, Slot: s.ID, Err: slotpool.ErrDuplicateSlot}
		}
		seen[s.ID] = struct{}{}
	}
	panic("slotpool: firstRepeat found no repeated slot id") // checkNew saw one
}

// Submit adds a bulk at the end of the waiting queue. It is fulfilled at
// once if it is the oldest waiting bulk and the pool has the slots, or if
// free slots no older bulk can use complete it; otherwise it waits. If a
// capacity is declared (SetCapacity) and the bulk cannot fit it, the bulk
// fails at once (a Failed event; Submit returns nil). An empty or
// duplicate bulk is rejected with a *BulkError.
func (p *Pool) Submit(now time.Time, b Bulk) error {
	if len(b.Requests) == 0 {
		return &BulkError{Op: "submit", Bulk: b.ID, Err: ErrEmptyBulk}
	}
	if _, ok := p.liveBulk(b.ID); ok {
		return &BulkError{Op: "submit", Bulk: b.ID, Err: ErrDuplicateBulk}
	}
	bk := p.newBulk(b)
	var s *shape
	isNew := false
	if len(b.Requests) == 1 {
		// One request, like the last bulk's (the usual case at scale: a
		// region of one slot): its live shape, without building its key
		// (reset left its class at 0, the shape's only one).
		s = p.shapes.single(&b.Requests[0].Profile)
	}
	if s == nil {
		p.shapes.classify(bk.classes(), b.Requests)
		s, isNew = p.shapes.lookup()
	}
	bk.shape = s
	p.enqueue(bk)
	p.bulks.set(bk.id, bk.handle+1)
	if !p.shapes.fitsCapacity(s) {
		p.fail(now, bk, p.neverFits(bk), slotpool.ReasonStopped)
		p.settle(now)
		return nil
	}
	// Place it first: a bulk fulfilled at once needs no verdict.
	p.settleAfterEnqueue(now, bk)
	if bk.state != BulkWaiting {
		return nil
	}
	if isNew {
		p.shapes.recheck(s)
		p.verdictsFlipped(now)
	} else if !s.fulfillable {
		p.startTimeout(now, bk)
	}
	p.askFor(bk)
	return nil
}

// Release says the task in a slot ended: the slot becomes available and
// goes to the oldest waiting bulk that can use it (or back to the
// admission if it was reclaimed). Only in-use slots can be released.
func (p *Pool) Release(now time.Time, id slotpool.SlotID) error {
	idx, ok := p.slotIndex(id)
	if !ok {
		return &slotpool.SlotError{Op: "release", Slot: id, Err: slotpool.ErrUnknownSlot}
	}
	s := p.slot(idx)
	if s.state != SlotInUse {
		return &slotpool.SlotError{Op: "release", Slot: id, Err: slotpool.ErrSlotNotInUse}
	}
	p.freeInUse(now, idx, s)
	p.settle(now)
	return nil
}

// freeInUse takes an in-use slot (index idx, record s) back from its
// task: a reclaimed slot goes to the admission, any other becomes
// available. (The record is passed along, not looked up again by every
// step: on a release, which every task's end makes, that was six
// look-ups of one slot.)
func (p *Pool) freeInUse(now time.Time, idx int32, s *slotRec) {
	reclaimed := s.reclaimed
	p.vacate(s)
	if reclaimed {
		p.leave(idx)
		p.startRelease(idx, slotpool.ReasonPreempted)
		return
	}
	if p.cfg.ReturnFreed && p.cfg.Admission {
		p.leave(idx)
		p.startRelease(idx, slotpool.ReasonStopped)
		return
	}
	p.makeAvailable(now, idx, s)
}

// vacate unbinds an in-use slot from its bulk's request. The slot is in no
// list afterwards; its profile counts it as reusable again.
func (p *Pool) vacate(s *slotRec) {
	b := s.bulk
	b.setSlot(s.request, -1)
	b.inUse--
	p.nInUse--
	if s.unbounded || s.reclaimed {
		p.profiles.recs[s.profile].fixed--
		p.shapes.reusableAdded(s.profile)
	}
	s.bulk, s.request, s.unbounded, s.reclaimed = nil, -1, false, false
	if b.inUse == 0 && b.state == BulkFulfilled {
		p.retire(b, BulkFulfilled)
	}
}

// Lose says a slot is gone (its machine died). A free or held slot simply
// leaves; a slot in use also yields a Lost event naming the bulk and
// request whose task must fail over.
func (p *Pool) Lose(now time.Time, id slotpool.SlotID) error {
	idx, ok := p.slotIndex(id)
	if !ok {
		return &slotpool.SlotError{Op: "lose", Slot: id, Err: slotpool.ErrUnknownSlot}
	}
	p.remove(now, idx, slotpool.ReasonLost)
	p.settle(now)
	return nil
}

// remove takes a slot out of the pool for good, whatever it was doing.
func (p *Pool) remove(now time.Time, idx int32, reason slotpool.Reason) {
	p.detach(idx, reason)
	if p.slot(idx).state == SlotReleasing {
		p.nRelease--
	}
	p.dropSlot(idx)
}

// detach ends what a slot in the pool is doing (free, held or in use) as
// it leaves the pool: a task in it is reported Lost with reason.
func (p *Pool) detach(idx int32, reason slotpool.Reason) {
	s := p.slot(idx)
	switch s.state {
	case SlotFree:
		p.removeFree(idx)
		p.leave(idx)
	case SlotHeld:
		p.removeHeld(idx)
		p.leave(idx)
		p.headShrunk()
	case SlotInUse:
		b, r := s.bulk, int(s.request)
		p.vacate(s)
		p.leave(idx)
		p.emit(Lost{Slot: s.id, Bulk: b.id, Request: r, Reason: reason})
		p.logDebug("slot in use lost", b.id, zap.Int64("slot", int64(s.id)), zap.Stringer("reason", reason))
	}
}

// leave accounts for a slot that is no longer free, held or in use
// leaving the pool.
func (p *Pool) leave(idx int32) {
	s := p.slot(idx)
	p.profiles.recs[s.profile].total--
	p.shapes.reusableLost(s.profile)
}

// headShrunk re-matches the head after it lost a held slot.
func (p *Pool) headShrunk() {
	if h := p.head; h != nil {
		h.rebuild = true
	}
}

// Cancel withdraws a live bulk. A waiting bulk leaves the queue; a
// fulfilled bulk's slots in use are taken back (its tasks are assumed
// stopped). Every slot it had goes first to older, then younger waiting
// bulks. A bulk the pool does not know, or has retired (failed, canceled,
// or fulfilled with every slot back), returns ErrUnknownBulk.
func (p *Pool) Cancel(now time.Time, id slotpool.BulkID) error {
	b, ok := p.liveBulk(id)
	if !ok {
		return &BulkError{Op: "cancel", Bulk: id, Err: ErrUnknownBulk}
	}
	if b.state == BulkWaiting {
		if p.head == b {
			p.returnHeld(now)
		}
		p.leaveWaiting(b, slotpool.ReasonStopped)
		p.retire(b, BulkCanceled)
		p.settle(now)
		return nil
	}
	b.state = BulkCanceled // so vacate does not retire it as fulfilled
	for _, idx := range b.slotList() {
		if idx >= 0 {
			p.freeInUse(now, idx, p.slot(idx))
		}
	}
	p.retire(b, BulkCanceled)
	p.settle(now)
	return nil
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

// neverFits builds the error of a bulk that cannot fit the capacity.
func (p *Pool) neverFits(b *bulk) *slotpool.NoResourceAvailableError {
	return &slotpool.NoResourceAvailableError{Bulk: b.id, Missing: p.shapes.beyondCapacity(b.shape), Never: true}
}

// retire forgets a bulk that no longer waits or has slots in use: a
// long-running caller accumulates nothing, and the id may be submitted
// again.
func (p *Pool) retire(b *bulk, st BulkState) {
	b.state = st
	p.bulks.del(b.id)
	if p.synced == b {
		p.synced = nil
	}
	if b.taken {
		p.bulkRecs.put(b) // reused by a later Submit, never within this call
	}
}

// liveBulk returns the live bulk with id.
func (p *Pool) liveBulk(id slotpool.BulkID) (*bulk, bool) {
	h, ok := p.bulks.get(id)
	if !ok {
		return nil, false
	}
	return p.bulkRecs.at(h - 1), true
}

// newBulk returns a bulk for b, reusing a retired one: a long run
// allocates bulks for the most that were ever live at once, not one per
// Submit.
func (p *Pool) newBulk(b Bulk) *bulk {
	bk := p.bulkRecs.take()
	if len(b.Requests) > 1 && bk.many == nil {
		if len(p.requestsSlab) == 0 {
			// Slabs double from 4 to 64 records: a pool with few bulks
			// allocates little.
			p.requestsSlabSize = min(max(2*p.requestsSlabSize, 4), 64)
			p.requestsSlab = make([]bulkRequests, p.requestsSlabSize)
		}
		bk.many = &p.requestsSlab[0]
		p.requestsSlab = p.requestsSlab[1:]
	}
	bk.reset(b)
	return bk
}

// newIDs returns a fresh slice of n slot ids, carved from a slab so that
// small bulks do not cost an allocation each.
func (p *Pool) newIDs(n int) []slotpool.SlotID {
	if n > 64 {
		return make([]slotpool.SlotID, n)
	}
	if len(p.idSlab) < n {
		// Slabs double from 16 to 1024 ids: a pool with few slots
		// allocates little.
		p.idSlabSize = min(max(2*p.idSlabSize, 16), 1024)
		p.idSlab = make([]slotpool.SlotID, max(p.idSlabSize, n))
	}
	ids := p.idSlab[:n:n]
	p.idSlab = p.idSlab[n:]
	return ids
}

// SetCapacity declares what the cluster can ever give this pool (nil:
// unknown, the default). While a capacity is declared, a bulk that cannot
// be matched against it fails at once with a *NoResourceAvailableError
// (Never set): at Submit, and for waiting bulks when the capacity shrinks.
// Without a declared capacity no bulk fails at once, since more slots may
// always be offered; the fulfillability timeout applies.
func (p *Pool) SetCapacity(now time.Time, capacity []resource.Count) {
	p.shapes.setCapacity(capacity)
	for i := 0; i < len(p.shapes.live); {
		s := p.shapes.live[i]
		if p.shapes.fitsCapacity(s) {
			i++
			continue
		}
		for s.bulks.Len() > 0 {
			b := s.bulks.Front()
			p.fail(now, b, p.neverFits(b), slotpool.ReasonStopped)
		}
	}
	p.settle(now)
}

// settle restores the pool's invariants after a mutation: the head holds
// what it can use, no younger bulk can be completed from free slots, the
// verdicts and timers are current, and the head asks for what it lacks.
func (p *Pool) settle(now time.Time) {
	if h := p.head; h != nil && h.rebuild {
		h.rebuild = false
		p.rebuildHead(now)
	}
	p.ensureHead(now)
	p.completeYounger(now)
	p.shapes.refresh()
	if len(p.shapes.flipped) > 0 {
		p.verdictsFlipped(now)
	}
	p.syncHeadAsk()
}

// settleAfterEnqueue is settle after Submit queued bulk b. Behind a head
// that stays, with no slot free, settle has nothing to do: the head is
// not rebuilt, no free slot can complete a younger bulk, no reusable slot
// changed, and the head's demand is synced. At scale (a region of one
// slot submitted for every task that finishes, on a cluster whose slots
// are all in use) that is most submits, and the checks cost less than
// settle's calls.
func (p *Pool) settleAfterEnqueue(now time.Time, b *bulk) {
	if h := p.head; h != nil && h != b && !h.rebuild && p.nFree == 0 && len(p.dirtyFree) == 0 &&
		len(p.shapes.dirty) == 0 && (!p.cfg.Admission || (h == p.synced && p.heldVersion == p.syncedVersion)) {
		return
	}
	p.settle(now)
}

// emit records e for Ready (and Link.Notes).
func (p *Pool) emit(e Event) { p.note(Note{Other: e}) }

// emitFulfilled records a Fulfilled inline, without boxing it (see Note).
func (p *Pool) emitFulfilled(f Fulfilled) { p.note(Note{Fulfilled: f}) }

// firstNotes is the room made for the events of a pool that has none
// yet: a region's usual events (its ask, its slots given back, its
// Fulfilled) without growing one by one.
const firstNotes = 8

// note appends n to the events.
func (p *Pool) note(n Note) {
	if p.events == nil {
		p.events = make([]Note, 0, firstNotes)
	}
	p.events = append(p.events, n)
}

// logDebug writes a debug entry about bulk b. Whether the logger takes
// debug entries is read once (New): a check per bulk costs more than the
// rest of a small bulk's bookkeeping.
func (p *Pool) logDebug(msg string, b slotpool.BulkID, fields ...zap.Field) {
	if p.debug { // small enough to inline: no call without debug
		p.writeDebug(msg, b, fields)
	}
}

func (p *Pool) writeDebug(msg string, b slotpool.BulkID, fields []zap.Field) {
	if ce := p.log.Check(zapcore.DebugLevel, msg); ce != nil {
		ce.Write(append(fields, zap.Int64("bulk", int64(b)))...)
	}
}
