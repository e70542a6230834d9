package scheduler

import (
	"slices"
	"time"

	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/slotpool"
)

// Ready is everything the scheduler asks of the runtime, and tells an
// observer, since the previous Ready: the outputs of the inputs in
// between, in the order a runtime applies them.
//
// The slices of a Ready (Requests and their Slots, Cancel, Released,
// PartitionsReleased, Deploy, Restarted, ToAdmission) are valid until the
// next call of Scheduler.Ready, and read-only; copy what you keep (Clone
// copies it all). The scheduler then reuses their storage.
//
// Apply it in field order: cancel first (a slot in Released or in Deploy
// may be one a canceled task ran in), delete released partitions, then
// deploy. A task deployed and
// canceled between two Ready calls appears in neither list.
type Ready struct {
	// Requests lists the regions that asked the pool for slots (one bulk
	// per region attempt), in the order they asked.
	Requests []Request
	// Cancel lists the tasks to stop: their region restarts, or the job
	// failed, or their slot was lost. Their slots are not reused before
	// the runtime has applied this Ready.
	Cancel []Task
	// Released lists the slots the scheduler gave back to the pool: every
	// task in them finished or is in Cancel. A slot may be listed twice:
	// given back, handed to another region and given back again within
	// one input (that region's tasks deployed and canceled between two
	// Ready calls, which appear in neither list); a runtime marks a
	// released slot free, which it may do twice.
	Released []Release
	// PartitionsReleased lists blocking result partitions no consumer
	// needs any more: the runtime may delete their data — before it
	// applies Deploy, which may restart their producer to write them anew.
	PartitionsReleased []PartitionID
	// Deploy lists the tasks to start, each in its slot, region by region
	// (the tasks sharing a slot together).
	Deploy []Deployment
	// Restarted lists the failovers: a failed task and the regions it
	// restarts (they ask for slots again once their inputs are complete).
	Restarted []Restart
	// Won lists, for tasks that had speculative attempts, the attempt
	// that finished first: its output is the task's; the task's other
	// attempts are in Cancel (see Speculation).
	Won []Task
	// Job is set when the job's state changed: to JobRunning at Start, to
	// JobFinished, or to JobFailed with the typed error (a *RegionError).
	Job *JobChange
	// ToAdmission lists the pool's messages for a queue-level admission
	// outside the scheduler (Config.ExternalAdmission), and the slots an
	// idle timeout gives back without an in-process admission
	// (Config.Pool.IdleTimeout); the answers go in through Scheduler.Admit.
	ToAdmission []slotpool.ToAdmission
	// Deadline is when Tick next has work to do, as of the moment Ready
	// was called; the zero time if none. (A Driver fires its timeouts
	// itself; a Ready it held back while inputs arrived may carry a
	// deadline that has moved since.)
	Deadline time.Time
}

// Clone returns a copy of rd whose slices are the caller's, valid after
// the next call of Ready: its lists, each request's slot list and each
// restart's region list are copied. The slots' member lists, which the
// scheduler never changes, and the messages of ToAdmission are shared.
func (rd Ready) Clone() Ready {
	c := rd
	c.Requests = slices.Clone(rd.Requests)
	for i := range c.Requests {
		c.Requests[i].Slots = slices.Clone(c.Requests[i].Slots)
	}
	c.Cancel = slices.Clone(rd.Cancel)
	c.Released = slices.Clone(rd.Released)
	c.PartitionsReleased = slices.Clone(rd.PartitionsReleased)
	c.Deploy = slices.Clone(rd.Deploy)
	c.Restarted = slices.Clone(rd.Restarted)
	for i := range c.Restarted {
		c.Restarted[i].Regions = slices.Clone(c.Restarted[i].Regions)
	}
	c.ToAdmission = slices.Clone(rd.ToAdmission)
	c.Won = slices.Clone(rd.Won)
	return c
}

// Task names one attempt of a task.
type Task struct {
	Task    TaskID
	Attempt Attempt
}

// Deployment asks the runtime to start attempt Attempt of task Task in
// slot Slot. Every report about the task carries Attempt.
type Deployment struct {
	Task    TaskID
	Attempt Attempt
	Slot    SlotID
	Region  RegionID
	// Speculative marks a speculative attempt of a task whose other
	// attempt runs (see Speculation): it runs beside it, reading the same
	// inputs.
	Speculative bool
	// Shared says the task went into a slot that its hybrid producers'
	// regions hold (see Config.DisableHybridSlotSharing): the slot runs it
	// beside them and is released once every task in it ended.
	Shared bool
}

// Request says region Region (attempt Attempt) asked for these slots,
// each with its members and resource profile.
type Request struct {
	Region  RegionID
	Attempt Attempt
	Slots   []region.Slot
	// Speculative marks the request of a speculative attempt of the
	// region's one task (see Speculation).
	Speculative bool
}

// Release says a slot of region Region's attempt went back to the pool.
type Release struct {
	Slot    SlotID
	Region  RegionID
	Attempt Attempt
}

// Restart is one failover: task Failed failed (or its slot was lost) and
// Regions restart.
type Restart struct {
	Failed  TaskID
	Regions []RegionID
}

// JobChange is a new job state; Err is set for JobFailed.
type JobChange struct {
	State JobState
	Err   error
}

// Ended reports whether the job ended with this change, and how: err is
// nil if it finished, its error (a *RegionError) if it failed. A nil
// change (a Ready without Job) has not ended; a runtime's loop stops on
//
//	if ended, err := rd.Job.Ended(); ended {
//		return err
//	}
func (c *JobChange) Ended() (ended bool, err error) {
	if c == nil {
		return false, nil
	}
	switch c.State {
	case JobFinished:
		return true, nil
	case JobFailed:
		return true, c.Err
	}
	return false, nil
}

// HasReady reports whether Ready has something to hand out (the deadline
// alone does not count).
func (s *Scheduler) HasReady() bool {
	rd := s.rd
	return len(rd.Requests) > 0 || len(rd.Cancel) > 0 || len(rd.Released) > 0 || len(rd.Deploy) > 0 ||
		len(rd.Restarted) > 0 || len(rd.PartitionsReleased) > 0 || rd.Job != nil || len(rd.ToAdmission) > 0 || len(rd.Won) > 0
}

// Ready hands out what accumulated since the previous call and starts
// afresh. It never fails and may be called at any time; a Ready with
// nothing in it is valid. Its slices are valid until the next call of
// Ready and read-only: copy what you keep (see Ready).
func (s *Scheduler) Ready() (out Ready) {
	out = *s.takeReady() // into the result: the one copy of the struct
	nilIfEmpty(&out.Requests)
	nilIfEmpty(&out.Cancel)
	nilIfEmpty(&out.Released)
	nilIfEmpty(&out.PartitionsReleased)
	nilIfEmpty(&out.Deploy)
	nilIfEmpty(&out.Restarted)
	nilIfEmpty(&out.ToAdmission)
	nilIfEmpty(&out.Won)
	return out
}

// takeReady is Ready without the copy (package internal/schedreuse hands
// it to the simulator, which applies a Ready on every event): it returns
// the storage of the Ready it hands out, valid and read-only until the
// next call of Ready or takeReady. Its empty lists may be empty but not
// nil.
func (s *Scheduler) takeReady() *Ready {
	out := s.rd
	clear(s.withdrawn)
	if s.deployAt != nil && len(out.Deploy) > 0 { // withdrawn deployments, see emitCancel
		kept := out.Deploy[:0]
		for _, d := range out.Deploy {
			if d.Task >= 0 {
				s.deployAt[d.Task] = 0
				kept = append(kept, d)
			}
		}
		out.Deploy = kept
	}
	if t, ok := s.NextDeadline(); ok {
		out.Deadline = t
	}
	// The storage handed out by the previous call is no longer read: it
	// collects the next Ready, and this one's stays with the caller until
	// then.
	s.cur ^= 1
	nx := &s.bufs[s.cur]
	// Lists with pointers are zeroed, but for Requests, whose slot lists
	// are the Regions' or those of the regions' attempts, at most one
	// Ready's worth; the others are only cut.
	if cap(nx.Requests)|cap(nx.Cancel)|cap(nx.Released)|cap(nx.PartitionsReleased)|cap(nx.Deploy)|
		cap(nx.Restarted)|cap(nx.ToAdmission)|cap(nx.Won) <= reuseMax {
		// None is large enough for reuse to drop (the usual case): each
		// is cut in place, which writes its length only.
		nx.Requests = nx.Requests[:0]
		nx.Cancel = nx.Cancel[:0]
		nx.Released = nx.Released[:0]
		nx.PartitionsReleased = nx.PartitionsReleased[:0]
		nx.Deploy = nx.Deploy[:0]
		nx.Won = nx.Won[:0]
		if len(nx.Restarted) > 0 {
			clear(nx.Restarted)
			nx.Restarted = nx.Restarted[:0]
		}
		if len(nx.ToAdmission) > 0 {
			clear(nx.ToAdmission)
			nx.ToAdmission = nx.ToAdmission[:0]
		}
	} else {
		nx.Requests, nx.Cancel, nx.Released = keepBurst(nx.Requests, &s.burstRequests), reuse(nx.Cancel), reuse(nx.Released)
		nx.PartitionsReleased, nx.Deploy = reuse(nx.PartitionsReleased), reuse(nx.Deploy)
		nx.Restarted, nx.ToAdmission, nx.Won = recycle(nx.Restarted), recycle(nx.ToAdmission), reuse(nx.Won)
	}
	nx.Job, nx.Deadline = nil, time.Time{}
	s.rd = nx
	// The one-member regions' slots point only into the Regions, which
	// outlive the scheduler: they keep nothing alive.
	spare := s.spareSlots[:0]
	if cap(spare) > reuseMax {
		spare = keepBurst(s.spareSlots, &s.burstSlots)
	}
	s.oneSlots, s.spareSlots = spare, s.oneSlots
	return out
}

// keepBurst is reuse, but a list reuse drops is kept in *burst, cleared,
// if it is larger than the one there.
func keepBurst[T any](l []T, burst *[]T) []T {
	r := reuse(l)
	if r == nil && cap(l) > cap(*burst) {
		clear(l[:cap(l)])
		*burst = l[:0]
	}
	return r
}

// growBurst returns l with room for n more elements, in the storage of
// *burst (then taken: nil) if l has not and *burst has.
func growBurst[T any](l []T, burst *[]T, n int) []T {
	if cap(l)-len(l) < n && cap(*burst) >= len(l)+n {
		l, *burst = append((*burst)[:0], l...), nil
	}
	return slices.Grow(l, n)
}

// recycle returns l emptied for the next Ready, its entries zeroed (it
// keeps nothing alive), as reuse does.
func recycle[T any](l []T) []T {
	clear(l)
	return reuse(l)
}

// reuseMax is the capacity up to which reuse keeps a list whatever its
// length.
const reuseMax = 1024

// reuse returns l emptied for the next Ready, its entries left as they
// are (for lists without pointers, or whose pointers keep nothing alive
// that would not be anyway); nil if it is far larger than it had to be
// (the Ready of Start, say, which asks for every source region's slots),
// so that a burst is not held for the rest of the run.
func reuse[T any](l []T) []T {
	if cap(l) > reuseMax && cap(l) > 8*len(l) {
		return nil
	}
	return l[:0]
}

// nilIfEmpty sets *l to nil if it is empty: an empty list of a Ready is
// nil, as in a Ready built by hand. A nil list is not written.
func nilIfEmpty[T any](l *[]T) {
	if len(*l) == 0 && *l != nil {
		*l = nil
	}
}

// emitDeploy adds a task to the next Ready's Deploy list.
func (s *Scheduler) emitDeploy(v TaskID, attempt strategy.Attempt, slot SlotID, r region.ID) {
	a := Attempt(attempt)
	if sp := s.spec; sp != nil {
		sp.deployed(v)
		a = s.ext(r, attempt)
	}
	s.rd.Deploy = append(s.rd.Deploy, Deployment{Task: v, Attempt: a, Slot: slot, Region: r})
	if s.deployAt != nil {
		s.deployAt[v] = int32(len(s.rd.Deploy))
	}
}

// withdrawnKey is a region attempt whose deployment a cancel withdrew.
type withdrawnKey struct {
	region  region.ID
	attempt Attempt
}

// emitCancel asks the runtime to stop a task; a deployment of it not
// handed out yet is withdrawn instead. The index of those deployments
// (deployAt) is made by the first cancel: a job that cancels nothing
// pays nothing for it.
func (s *Scheduler) emitCancel(v TaskID, attempt strategy.Attempt) {
	a := s.ext(s.rs.RegionOf(v), attempt)
	if s.deployAt == nil {
		s.deployAt = make([]int32, s.rs.Topology().NumExecutionVertices())
		for i, d := range s.rd.Deploy {
			if d.Task >= 0 && !d.Speculative {
				s.deployAt[d.Task] = int32(i + 1)
			}
		}
	}
	if i := s.deployAt[v]; i > 0 && s.rd.Deploy[i-1].Attempt == a {
		d := &s.rd.Deploy[i-1]
		d.Task = -1 // dropped by Ready
		s.deployAt[v] = 0
		if k := (withdrawnKey{region.ID(d.Region), d.Attempt}); !s.withdrawn[k] {
			// The runtime never sees the region deployed: it counts no
			// deployment.
			if s.withdrawn == nil {
				s.withdrawn = map[withdrawnKey]bool{}
			}
			s.withdrawn[k] = true
			s.stats.RegionsDeployed--
			if d.Shared {
				s.stats.RegionsShared--
			}
		}
		return
	}
	s.rd.Cancel = append(s.rd.Cancel, Task{Task: v, Attempt: a})
}

// setState records a job state change for the next Ready.
func (s *Scheduler) setState(st JobState, err error) {
	s.state, s.err = st, err
	s.rd.Job = &JobChange{State: st, Err: err}
}
