// Package slotpool is the seam between the slot pool of a job and the
// queue-level admission that gives it slots: the slots themselves (Slot,
// SlotID, Slots), the pool's settings (Config), the messages the two
// exchange, the Admission interface an admission implements, and the
// errors the pool returns. It knows nothing of job graphs: it imports only
// package resource.
//
// Every scheduler (package scheduler) owns the slot pool of its job, which
// hands slots to the job's regions: one bulk of slot requests per
// pipelined region, all-or-nothing, in FIFO order, with the fulfillability
// timeouts of Flink's FLIP-119 and without its resource deadlocks for
// slots of different sizes. Its slots come from the runtime
// (Scheduler.Offer: a static cluster, or the runtime's own slots) or from
// an admission, in process (scheduler.Config.Admission; package admission
// has StaticCluster and the multi-job Queues) or outside the scheduler (its
// messages come out in the scheduler's Ready and the answers go in through
// Scheduler.Admit).
//
// Slots are offered by id and profile: slotpool.Slot{ID: 10, Profile: prof},
// or slotpool.Slots(n) for n slots of unknown size (ids 1 ... n) that
// serve any request.
//
// # Rules
//
// FIFO: a slot that becomes available (offered, granted, released by its
// task, given back by a canceled or failed bulk) goes to the oldest
// waiting bulk that can use it, not to the bulk that asked for it.
//
// Atomic bulks: only the oldest waiting bulk, the head, holds slots while
// it waits, and only slots that raise the number of its requests it can
// serve. Its held slots are not bound to requests until it commits; then
// resource.Assign matches its requests against held and free slots and
// picks the smallest, and the held slots it does not need go back. A
// younger bulk never holds slots: it is committed when free slots the head
// cannot use complete it, the oldest such bulk first. So no bulk sits on
// part of what it needs while another could run, and a wrong-size match
// is never frozen: FLIP-119's "allocated slots too small to fulfill the
// oldest request" and "slots of different sizes improperly assigned"
// deadlocks cannot happen, and with bounded tasks and a cluster that holds
// the largest bulk every bulk is eventually fulfilled (unless its timeout
// expires first), same-shaped bulks in submission order.
//
// Fulfillability: a waiting bulk is fulfillable if its requests can be
// matched against the reusable slots: every slot of the pool except those
// whose task is unbounded (a streaming task) or that the admission
// reclaimed. An unfulfillable bulk's timeout starts (Config.Timeout); if
// it becomes fulfillable the timeout is canceled; if lost slots make it
// unfulfillable again a new timeout starts. On timeout the bulk fails (a
// NoResourceAvailableError) and its slots go back. A bulk that cannot be
// matched against the declared capacity of the cluster
// (Scheduler.SetCapacity, or the admission's Capacity message) fails at
// once; with no declared capacity nothing fails at once, since more slots
// may still come.
//
// Matching: a slot serves a request if it is at least as large in every
// dimension, or (Config.Matching = resource.ExactMatch) of exactly its
// profile; resource.Unknown matches anything.
//
// # The admission protocol
//
// The pool declares its demand to an admission and gets slots granted and
// taken back as messages, so that both sides stay deterministic state
// machines. Whoever owns the loop (the scheduler, its driver, a simulator)
// carries them: the pool's ToAdmission messages go to Admission.Handle,
// the admission's FromAdmission messages, from Admission.Ready, go back
// to the pool.
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
//   - With an admission, every bulk that has to wait declares demand
//     with all-or-nothing gangs. A younger bulk asks once, when it is
//     submitted, for all its requests, so that the admission can start
//     providing for several regions at once (FLIP-119's parallel slot
//     requests). The head (the oldest waiting bulk) keeps exactly one
//     outstanding ask for exactly what it lacks: when it becomes the head,
//     and whenever what it lacks changes otherwise than by a grant of its
//     own ask (it absorbed a released slot, or lost a held one), its asks
//     are withdrawn and a new one is made (Ask.Head, Ask.Holding). What it
//     lacks is computed over its held slots plus hypothetical ones, least
//     demanding profiles first, so any slots that serve the ask complete
//     the head whichever of its requests its held slots serve now. So the
//     ask the pool most needs is never stale, and never asks for what the
//     pool already holds.
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
//     once; if a task runs in it, the task fails over (the scheduler
//     cancels and restarts its region). The pool confirms with a
//     SlotRelease echo.
//   - Reclaim (non-preemptive reclaim): the slot leaves as soon as no task
//     runs in it (at once if free or held), with a SlotRelease
//     (ReasonPreempted); until then it does not count as reusable. The
//     ask stands until the slot is back, so an admission asks once per
//     grant of a slot. An admission with a reclaim timeout sends a
//     Revoke when it expires.
//   - Capacity declares what the admission could ever grant this pool; a
//     bulk that cannot fit it fails at once.
//
// Multi-job policies (fifo, priority, fair share, StateAware, gangs with
// placeholders, preemption with reclaim timeouts) live behind Admission:
// they decide whom to grant, revoke or reclaim, and the pool needs no
// change. Placeholders are the admission's own business: it grants the
// real slots when the gang is reserved, or grants placeholder slots and
// later revokes them with ReasonPlaceholderReplaced after granting the
// real ones.
//
// # Implementing an admission
//
// An admission is a deterministic state machine, like the pool: no
// goroutines, no clock; time is an argument of Handle and Tick. It takes
// the pool's messages in Handle, hands its answers out in Ready, and fires
// its timers in Tick at NextDeadline. Plugged into a scheduler, it answers
// inside the scheduler's calls (the Example grants every ask from a list
// of slots):
//
//	s, err := scheduler.New(regions, scheduler.Config{Admission: myAdmission}) // err: a contradicting Config
//	s.Start(now) // the source regions' asks reach myAdmission.Handle; its grants deploy them
//	rd := s.Ready()
package slotpool
