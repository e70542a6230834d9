package summary

import (
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/runfile"
)

// Accumulator computes the figures of a run's summary from its trace
// events, whatever ran them (docs/cli.md, "The summary of a run on a
// cluster"). Feed it every trace event of the run, in time order (Event),
// then read the figures (Figures) and when each job first got a slot
// (FirstDeploy).
//
// A slot is a job's (the trace's job and slot) from the deploy of a task
// or driver into it until its release. While at least one task deployed
// into it has not finished, failed or been cancelled, its time is work
// progressing; while a driver holds it, drivers' time; otherwise (the
// slot is held, but its tasks ended and it was not released yet) held
// waiting. A region deployment is a region attempt whose tasks were
// deployed; a restart is a task's failure; the regions restarted are the
// attempts after the first of every region. An Accumulator is not safe
// for concurrent use.
type Accumulator struct {
	jobs   map[string]int // job name -> index; a run of one job names none in its events
	single bool
	// queues of each job: its queue and every ancestor but root.
	jobQueues [][]*queueTrack
	queues    map[string]*queueTrack

	last            time.Duration
	seen            bool
	busy, work, drv int // slots held, with a task running, held by a driver
	busyT, workT    time.Duration
	drvT            time.Duration
	state           map[slotKey]*slotState
	// holder maps a slot to the job holding it, when slot ids are the
	// cluster's (ClusterSlotIDs).
	holder map[int]int

	firstDeploy []time.Duration
	deployed    map[regionAttempt]bool
	attempts    map[regionKey]int
	deployments int
	shared      int
	failovers   int
	reclaims    int
	reclaimed   int
}

// slotKey names a slot of a job: backends number slots per job.
type slotKey struct {
	job  int
	slot int
}

// taskKey names one attempt of a task in a slot.
type taskKey struct {
	task        string
	attempt     int
	speculative bool
}

// slotState is what a slot holds.
type slotState struct {
	held    bool
	driver  bool
	running map[taskKey]bool
}

// class says how a slot's time counts: 0 free, 1 held waiting, 2 work,
// 3 driver.
func (s *slotState) class() int {
	switch {
	case len(s.running) > 0:
		return classWork
	case s.driver:
		return classDriver
	case s.held:
		return classHeld
	}
	return classFree
}

const (
	classFree = iota
	classHeld
	classWork
	classDriver
)

// regionKey names a region of a job; regionAttempt one of its attempts.
type regionKey struct {
	job, region int
}

type regionAttempt struct {
	regionKey
	attempt int
}

// queueTrack follows the slots a queue holds.
type queueTrack struct {
	name       string
	held, peak int
	slotTime   time.Duration
}

// NewAccumulator returns the Accumulator of a run of jobs (their names,
// in order); jobQueue maps every job to the queue it was submitted to (a
// job not in it goes to root.default).
func NewAccumulator(jobs []string, jobQueue map[string]string) *Accumulator {
	a := &Accumulator{jobs: make(map[string]int, len(jobs)), single: len(jobs) == 1,
		queues: map[string]*queueTrack{}, state: map[slotKey]*slotState{}, firstDeploy: make([]time.Duration, len(jobs)),
		deployed: map[regionAttempt]bool{}, attempts: map[regionKey]int{}}
	a.jobQueues = make([][]*queueTrack, len(jobs))
	for i, j := range jobs {
		a.jobs[j] = i
		a.firstDeploy[i] = -1
		q := jobQueue[j]
		if q == "" {
			q = "root.default"
		}
		for n := q; n != ""; n = parentQueue(n) {
			a.jobQueues[i] = append(a.jobQueues[i], a.queue(n))
		}
	}
	return a
}

// ClusterSlotIDs says that the run's slot ids are the cluster's, not
// numbered per job (Kubernetes' are): a deploy into a slot that another
// job holds ends that job's hold on it (the slot was taken from it), in
// case a trace has no release for a slot revoked.
func (a *Accumulator) ClusterSlotIDs() {
	if a.holder == nil {
		a.holder = map[int]int{}
	}
}

// queue returns the track of the queue named, made with its ancestors
// if new.
func (a *Accumulator) queue(name string) *queueTrack {
	t := a.queues[name]
	if t == nil {
		t = &queueTrack{name: name}
		a.queues[name] = t
		if p := parentQueue(name); p != "" {
			a.queue(p)
		}
	}
	return t
}

// parentQueue is the name of a queue's parent ("" for a name without
// one).
func parentQueue(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// jobOf is the index of an event's job, false for a job not of the run.
func (a *Accumulator) jobOf(e runfile.Event) (int, bool) {
	if e.Job == "" && a.single {
		return 0, true
	}
	i, ok := a.jobs[e.Job]
	return i, ok
}

// advance counts the time from the last event to t (a time before the
// last event's counts as the last event's: events reported a little out
// of order by concurrent tasks).
func (a *Accumulator) advance(t time.Duration) {
	if !a.seen {
		a.seen, a.last = true, 0
	}
	if t <= a.last {
		return
	}
	d := t - a.last
	a.busyT += time.Duration(a.busy) * d
	a.workT += time.Duration(a.work) * d
	a.drvT += time.Duration(a.drv) * d
	for _, q := range a.queues {
		q.slotTime += time.Duration(q.held) * d
	}
	a.last = t
}

// Event takes the next trace event of the run. Events of jobs not of the
// run, and ends of tasks never deployed, are ignored.
func (a *Accumulator) Event(e runfile.Event) {
	a.advance(e.At)
	if e.Kind == runfile.Reclaim {
		a.reclaims++
		a.reclaimed += e.Slots
		return
	}
	j, ok := a.jobOf(e)
	if !ok || !e.Kind.Traced() {
		return
	}
	driver := e.Task == runfile.DriverTask && e.Region == runfile.NoRegion
	if !driver && !e.Speculative && e.Task != "" && e.Region >= 0 {
		rk := regionKey{job: j, region: e.Region}
		a.attempts[rk] = max(a.attempts[rk], e.Attempt)
	}
	switch e.Kind {
	case runfile.Deploy:
		if !driver {
			if a.firstDeploy[j] < 0 {
				a.firstDeploy[j] = e.At
			}
			if ra := (regionAttempt{regionKey{j, e.Region}, e.Attempt}); !e.Speculative && !a.deployed[ra] {
				a.deployed[ra] = true
				a.deployments++
				if e.Shared {
					a.shared++
				}
			}
		}
		if other, ok := a.holder[e.Slot]; ok && other != j && e.Slot != runfile.NoSlot {
			a.change(other, e.Slot, func(s *slotState) { *s = slotState{} })
		}
		if a.holder != nil && e.Slot != runfile.NoSlot {
			a.holder[e.Slot] = j
		}
		a.change(j, e.Slot, func(s *slotState) {
			s.held = true
			if driver {
				s.driver = true
				return
			}
			if s.running == nil {
				s.running = map[taskKey]bool{}
			}
			s.running[taskKey{e.Task, e.Attempt, e.Speculative}] = true
		})
	case runfile.Finish, runfile.Fail, runfile.Cancel:
		if e.Kind == runfile.Fail && !driver && !e.Speculative {
			a.failovers++
		}
		if driver {
			return // its slot is the driver's until released
		}
		a.change(j, e.Slot, func(s *slotState) { delete(s.running, taskKey{e.Task, e.Attempt, e.Speculative}) })
	case runfile.Release:
		if h, ok := a.holder[e.Slot]; ok && h == j {
			delete(a.holder, e.Slot)
		}
		a.change(j, e.Slot, func(s *slotState) { s.held, s.driver = false, false })
	}
}

// change applies f to the state of a job's slot and counts the slot's
// time in its new class from now on.
func (a *Accumulator) change(j, slot int, f func(*slotState)) {
	if slot == runfile.NoSlot {
		return
	}
	k := slotKey{job: j, slot: slot}
	s := a.state[k]
	if s == nil {
		s = &slotState{}
		a.state[k] = s
	}
	before := s.class()
	f(s)
	after := s.class()
	if before == after {
		return
	}
	a.count(before, -1)
	a.count(after, +1)
	if busyBefore, busyAfter := before != classFree, after != classFree; busyBefore != busyAfter {
		d := 1
		if !busyAfter {
			d = -1
		}
		for _, q := range a.jobQueues[j] {
			q.held += d
			q.peak = max(q.peak, q.held)
		}
	}
	if after == classFree && len(s.running) == 0 {
		delete(a.state, k)
	}
}

// count adds d slots to a class's count.
func (a *Accumulator) count(class, d int) {
	if class != classFree {
		a.busy += d
	}
	switch class {
	case classWork:
		a.work += d
	case classDriver:
		a.drv += d
	}
}

// FirstDeploy is when job's first task (not its driver) was deployed,
// negative if never (or if the job is not of the run).
func (a *Accumulator) FirstDeploy(job string) time.Duration {
	i, ok := a.jobs[job]
	if !ok {
		return -1
	}
	return a.firstDeploy[i]
}

// Figures are the figures of a run's summary.
type Figures struct {
	// Makespan is the time of the last event.
	Makespan time.Duration
	// Slots is the number of slots of the run.
	Slots int
	// WorkUtilization, HeldWaiting and DriverHeld are shares of the slot
	// time (Makespan times Slots): with a task running, held without
	// one, held by a driver.
	WorkUtilization, HeldWaiting, DriverHeld float64
	// Deployments counts the region deployments (region attempts
	// deployed), Shared those into their hybrid producers' slots.
	Deployments, Shared int
	// Failovers counts the tasks' failures, RegionRestarts the regions'
	// attempts after their first.
	Failovers, RegionRestarts int
	// Reclaims counts the reclaims and ReclaimedSlots the slots they
	// took.
	Reclaims, ReclaimedSlots int
	// Queues are the queues (each with its ancestors; root only when
	// configured with a guarantee or a maximum) by name.
	Queues []Queue
}

// Figures returns the figures of the run so far on slots slots, its end
// at end or at its last event, whichever is later: what is still held is
// counted up to then. queues are the queues configured, with their
// guarantees and maximums (none when the cluster decides alone): they are
// listed with the queues the jobs used.
func (a *Accumulator) Figures(end time.Duration, slots int, queues []admission.QueueConfig) Figures {
	for _, q := range queues {
		a.queue(q.Name)
	}
	a.advance(max(end, a.last))
	f := Figures{Makespan: a.last, Slots: slots, Deployments: a.deployments, Shared: a.shared, Failovers: a.failovers,
		Reclaims: a.reclaims, ReclaimedSlots: a.reclaimed}
	for _, n := range a.attempts {
		f.RegionRestarts += n
	}
	total := float64(a.last) * float64(slots)
	if total > 0 {
		f.WorkUtilization = float64(a.workT) / total
		f.DriverHeld = float64(a.drvT) / total
		f.HeldWaiting = float64(max(0, a.busyT-a.workT-a.drvT)) / total
	}
	for _, q := range a.queues {
		s := Queue{Name: q.name, Peak: q.peak}
		for _, c := range queues {
			if c.Name == q.name {
				s.Guaranteed, s.Max = c.GuaranteedSlots, c.MaxSlots
			}
		}
		if q.name == "root" && s.Guaranteed == 0 && s.Max == 0 {
			continue // (it holds every slot held: a line of its own only when configured with capacities)
		}
		if total > 0 {
			s.Share = float64(q.slotTime) / total
		}
		f.Queues = append(f.Queues, s)
	}
	slices.SortFunc(f.Queues, func(x, y Queue) int { return strings.Compare(x.Name, y.Name) })
	return f
}
