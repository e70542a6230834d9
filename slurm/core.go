package slurm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// jobConfig configures a jobCore.
type jobConfig struct {
	// Name is the base of the Slurm job names: the allocation of ask N is
	// the job "Name-aN". It must be unique among the users of the cluster
	// for as long as Slurm remembers finished jobs (MinJobAge), since jobs
	// are found again by name after an outage: add a run id. No spaces
	// or commas.
	Name string
	// Queue is the job's queue; Partitions maps queues to Slurm
	// partitions. A queue not in the map uses partition; an empty
	// partition is the cluster's default partition.
	Queue      string
	Partitions map[string]string
	Partition  string
	// DefaultCPUs is the CPUs of a slot whose profile is Unknown (default
	// 1).
	DefaultCPUs int
	// ExtraArgs go to every sbatch (--account, --qos, ...).
	ExtraArgs []string
	// TimeLimit is every allocation's time limit (sbatch --time, rounded
	// up to whole minutes): Slurm ends an allocation by then even if its
	// runtime died without cancelling it. Zero means the partition's.
	TimeLimit time.Duration
	// Comment tags every allocation (sbatch --comment): Leftovers finds a
	// run's allocations by it. No newline.
	Comment string
}

// PartitionName returns the partition of the configured queue ("" for
// the cluster's default).
func (c jobConfig) PartitionName() string {
	if p, ok := c.Partitions[c.Queue]; ok {
		return p
	}
	return c.Partition
}

// validate checks the fields a jobCore relies on.
func (c jobConfig) validate() error {
	if c.Name == "" || strings.ContainsAny(c.Name, ", \t\n") {
		return &ConfigError{Field: "Name", Value: c.Name, Why: "must be non-empty, without spaces or commas"}
	}
	if c.TimeLimit < 0 {
		return &ConfigError{Field: "TimeLimit", Value: c.TimeLimit.String(), Why: "must be at least 0"}
	}
	if strings.ContainsAny(c.Comment, "\n\r") {
		return &ConfigError{Field: "Comment", Value: c.Comment, Why: "must be one line"}
	}
	if c.DefaultCPUs < 0 {
		return &ConfigError{Field: "DefaultCPUs", Value: fmt.Sprint(c.DefaultCPUs), Why: "must be at least 0"}
	}
	return nil
}

// commandKind says what a slurmCommand does.
type commandKind uint8

// The commands a jobCore asks its I/O layer to run.
const (
	// cmdSubmit: sbatch Request under the job name Name; report with
	// jobCore.submitted.
	cmdSubmit commandKind = iota + 1
	// cmdCancel: scancel Job (or, with Job 0, every job named Name); report
	// with jobCore.cancelled.
	cmdCancel
	// cmdSetPriority: scontrol update of Job's priority to Priority, run as
	// Principal ("" the client's own identity); report with
	// slurmCluster.PriorityDone.
	cmdSetPriority
)

// slurmCommand is one Slurm command to run for the jobCore (or the slurmCluster).
type slurmCommand struct {
	Kind      commandKind
	Name      string
	Job       JobID
	Request   jobRequest
	Priority  int64
	Principal string
	// change is the slurmCluster's record of a cmdSetPriority.
	change *priorityChange
}

// slotPlacement is where a granted slot lives: its allocation's job (the
// leader of a heterogeneous job), the component (HetGroup, -1 for a job
// that is not heterogeneous), the node, and the slot's CPUs.
type slotPlacement struct {
	Job      JobID
	HetGroup int
	Node     string
	CPUs     int
}

// allocState is where an allocation is in its life.
type allocState uint8

const (
	allocSubmitting allocState = iota // sbatch issued, no answer yet
	allocUnsure                       // sbatch's outcome unknown: found by name at the next observation, or submitted again
	allocPending                      // job known, not running yet
	allocGranted                      // running, its slots granted
	allocEnding                       // cancelled (or ended), waiting for Slurm to confirm
	allocDone                         // forgotten
)

// allocation is one ask's Slurm job.
type allocation struct {
	ask       slotpool.AskID
	name      string
	req       jobRequest
	job       JobID
	state     allocState
	withdrawn bool // the ask was released before its grant
	slots     []slotpool.SlotID
	live      int  // granted slots not yet released
	cancel    bool // a cancel is in flight
	reclaimed bool // Slurm is preempting it: its slots were reclaimed
	reason    string
	priority  int64
	since     time.Time // when Slurm took the job (pending since)
}

// slotState is the admission's view of a granted slot.
type slotState struct {
	alloc   *allocation
	place   slotPlacement
	revoked bool // revoked, waiting for the pool's SlotRelease echo
}

// jobCore is one job's allocations in Slurm, the per-job part of the
// cluster state machine (slurmCluster, whose ports hand it their pools'
// messages; an adapter drives the one of its job directly). It turns
// each all-or-nothing ask into one Slurm job, hands out the commands to
// run (commands), and turns their results (submitted, cancelled) and the
// observed job states (observe) into grants, revokes and release
// confirmations (ready). It has no goroutine, clock or process.
type jobCore struct {
	cfg      jobConfig
	part     partition
	allocs   []*allocation // in ask order; done ones are dropped
	byAsk    map[slotpool.AskID]*allocation
	byName   map[string]*allocation
	slots    map[slotpool.SlotID]*slotState
	nextSlot slotpool.SlotID
	out      []slotpool.FromAdmission
	cmds     []slurmCommand
	refused  []error
	dups     map[JobID]bool // duplicate jobs of a name being cancelled
	// failedDups are cancels of duplicates that failed: Shutdown issues
	// them again unless an observation did, or found the duplicate ended.
	failedDups []slurmCommand
	// retired are the placements of the slots released since the last
	// settle ([0]) and since the one before it ([1]): a deployment
	// decided before a slot's release may still be applied after it
	// (deployPlacement).
	retired [2]map[slotpool.SlotID]slotPlacement
}

// newJobCore returns a jobCore for the partition part (as the I/O layer found
// it) and declares the capacity: as many slots of DefaultCPUs as the
// partition's usable CPUs hold, of the Unknown profile (a count, not a
// shape: Slurm decides the shape of each allocation, and asks that can
// never fit are refused with a *TooLargeError).
func newJobCore(cfg jobConfig, part partition) (*jobCore, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.DefaultCPUs == 0 {
		cfg.DefaultCPUs = 1
	}
	c := &jobCore{cfg: cfg, part: part, byAsk: map[slotpool.AskID]*allocation{}, byName: map[string]*allocation{},
		slots: map[slotpool.SlotID]*slotState{}, nextSlot: 1, dups: map[JobID]bool{}}
	c.out = append(c.out, slotpool.Capacity{Slots: []resource.Count{{Profile: resource.Unknown, N: part.CPUs() / cfg.DefaultCPUs}}})
	return c, nil
}

// handle takes a message from the pool: an Ask is checked against the
// partition (a *TooLargeError if it can never fit) and submitted; an
// AskRelease cancels the ask's job if it has not been granted; a
// SlotRelease is confirmed (unless it echoes a Revoke) and the last slot
// released of an allocation cancels its job.
func (c *jobCore) handle(_ time.Time, msg slotpool.ToAdmission) error {
	switch m := msg.(type) {
	case slotpool.Ask:
		if m.Speculative {
			// Slurm decides who gets what: nothing here can tell whether
			// a regular ask of another job waits for the slot.
			return fmt.Errorf("slurm: ask %d: %w", m.ID, slotpool.ErrSpeculativeAsk)
		}
		return c.ask(m)
	case slotpool.AskRelease:
		a, ok := c.byAsk[m.ID]
		if !ok || a.state == allocGranted || a.state >= allocEnding {
			return nil // already granted (the slots are surplus) or gone
		}
		a.withdrawn = true
		if a.state == allocPending {
			c.end(a)
		}
		return nil
	case slotpool.SlotRelease:
		s, ok := c.slots[m.Slot]
		if !ok {
			return &slotpool.SlotError{Op: "release", Slot: m.Slot, Err: slotpool.ErrUnknownSlot}
		}
		if !s.revoked {
			c.out = append(c.out, slotpool.ReleaseConfirmed{Slot: m.Slot, Reason: m.Reason})
		}
		if c.retired[0] == nil {
			c.retired[0] = map[slotpool.SlotID]slotPlacement{}
		}
		c.retired[0][m.Slot] = s.place
		delete(c.slots, m.Slot)
		a := s.alloc
		a.live--
		if a.live == 0 && a.state == allocGranted {
			c.end(a)
		}
		c.forget(a)
		return nil
	default:
		return fmt.Errorf("slurm: %T: %w", msg, slotpool.ErrUnknownMessage)
	}
}

// ask maps and checks a new ask and submits its job.
func (c *jobCore) ask(m slotpool.Ask) error {
	if _, dup := c.byAsk[m.ID]; dup {
		return fmt.Errorf("slurm: ask %d asked twice: %w", m.ID, ErrRejected)
	}
	part := c.cfg.PartitionName()
	if part == "" {
		part = c.part.Name // the default partition, as found: the capacity is its
	}
	req, err := mapGang(m.Gang, part, c.cfg.DefaultCPUs)
	if err != nil {
		return err
	}
	req.TimeLimit, req.Comment, req.Extra = c.cfg.TimeLimit, c.cfg.Comment, c.cfg.ExtraArgs
	if err := c.fits(m.ID, req); err != nil {
		c.refused = append(c.refused, err)
		return err
	}
	a := &allocation{ask: m.ID, name: fmt.Sprintf("%s-a%d", c.cfg.Name, m.ID), req: req}
	c.allocs = append(c.allocs, a)
	c.byAsk[m.ID] = a
	c.byName[a.name] = a
	c.submit(a)
	return nil
}

// fits refuses a job the partition can never hold: a slot larger than
// every node, or more slots than the nodes hold.
func (c *jobCore) fits(ask slotpool.AskID, req jobRequest) error {
	p := c.part
	total := 0
	for _, comp := range req.Components {
		slotsFit, biggest := 0, 0
		for _, n := range p.Nodes {
			cpus := p.UsableCPUs(n)
			biggest = max(biggest, cpus)
			if comp.MemPerCPU > 0 && n.MemoryMB > 0 && comp.MemPerCPU*int64(comp.CPUsPerTask) > n.MemoryMB {
				continue
			}
			if !hasGres(n, comp) {
				continue
			}
			k := cpus / comp.CPUsPerTask
			if len(comp.Gres) > 0 {
				k = min(k, 1)
			}
			slotsFit += k
		}
		if slotsFit < comp.Tasks {
			if biggest < comp.CPUsPerTask {
				return &TooLargeError{Ask: ask, Partition: p.Name, Need: fmt.Sprintf("slots of %d CPUs", comp.CPUsPerTask), Have: fmt.Sprintf("nodes of at most %d CPUs", biggest), Unavailable: p.OutOfService()}
			}
			return &TooLargeError{Ask: ask, Partition: p.Name, Need: fmt.Sprintf("%d slots of %v", comp.Tasks, comp.Profile), Have: fmt.Sprintf("room for %d", slotsFit), Unavailable: p.OutOfService()}
		}
		total += comp.CPUs()
	}
	if have := p.CPUs(); total > have {
		return &TooLargeError{Ask: ask, Partition: p.Name, Need: fmt.Sprintf("%d CPUs", total), Have: fmt.Sprintf("%d CPUs", have), Unavailable: p.OutOfService()}
	}
	return nil
}

// hasGres reports whether node n has the generic resources a slot of comp
// needs.
func hasGres(n node, comp component) bool {
	if comp.GPUsPerTask > 0 && n.Gres["gpu"] < comp.GPUsPerTask {
		return false
	}
	for _, g := range comp.Gres {
		name, count, _ := strings.Cut(g, ":")
		var want int64
		fmt.Sscan(count, &want)
		if n.Gres[name] < want {
			return false
		}
	}
	return true
}

// submit issues the sbatch of an allocation.
func (c *jobCore) submit(a *allocation) {
	a.state = allocSubmitting
	c.cmds = append(c.cmds, slurmCommand{Kind: cmdSubmit, Name: a.name, Request: a.req})
}

// end cancels an allocation's job (its slots are all back, or it was
// withdrawn) and waits for Slurm to confirm.
func (c *jobCore) end(a *allocation) {
	a.state = allocEnding
	if !a.cancel {
		a.cancel = true
		c.cmds = append(c.cmds, slurmCommand{Kind: cmdCancel, Name: a.name, Job: a.job})
	}
}

// forget drops an allocation that is over: ended in Slurm (or never
// started) and with every slot back.
func (c *jobCore) forget(a *allocation) {
	if a.state != allocDone || a.live > 0 {
		return
	}
	delete(c.byAsk, a.ask)
	delete(c.byName, a.name)
	c.allocs = slices.DeleteFunc(c.allocs, func(x *allocation) bool { return x == a })
}

// submitted reports the outcome of a cmdSubmit: the job id, or the error.
// An unreachable controller (or a timeout) leaves the outcome unknown:
// the job is looked for by name at the next observation, and submitted
// again only if it is not there. Any other error refuses the ask
// (Refused).
func (c *jobCore) submitted(now time.Time, name string, job JobID, err error) {
	a, ok := c.byName[name]
	if !ok || a.state != allocSubmitting {
		return
	}
	switch {
	case err == nil:
		a.job, a.state, a.since = job, allocPending, now
		if a.withdrawn {
			c.end(a)
		}
	case isUnreachable(err):
		a.state = allocUnsure
	default:
		c.refused = append(c.refused, fmt.Errorf("slurm: ask %d: %w", a.ask, err))
		a.state = allocDone
		c.forget(a)
	}
}

// cancelled reports the outcome of a cmdCancel. After an error the cancel is
// issued again at the next observation that finds the job alive.
func (c *jobCore) cancelled(_ time.Time, name string, job JobID, err error) {
	if c.dups[job] {
		// Done, or to be issued again by the next observation that finds
		// the duplicate alive (or by Shutdown).
		delete(c.dups, job)
		if err != nil {
			c.failedDups = append(c.failedDups, slurmCommand{Kind: cmdCancel, Name: name, Job: job})
		}
		return
	}
	if a, ok := c.byName[name]; ok && err != nil {
		a.cancel = false
	}
}

// watched returns the job names whose state the jobCore needs (every
// allocation not over), sorted: the I/O layer queries them and passes
// the answer to Observe.
func (c *jobCore) watched() []string {
	var names []string
	for _, a := range c.allocs {
		if a.state != allocDone {
			names = append(names, a.name)
		}
	}
	slices.Sort(names)
	return names
}

// busy reports whether the jobCore waits for Slurm: a job submitted and not
// granted, or cancelled and not confirmed.
func (c *jobCore) busy() bool {
	for _, a := range c.allocs {
		if a.state != allocGranted && a.state != allocDone {
			return true
		}
	}
	return false
}

// observe takes what squeue said about the job names in names (every
// status of those names, heterogeneous components included): running
// jobs are granted, preempted or vanished ones revoked, and jobs that
// ended without an allocation submitted again.
func (c *jobCore) observe(now time.Time, names []string, statuses []jobStatus) {
	byName := map[string][]jobStatus{}
	for _, s := range statuses {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for _, name := range names {
		a, ok := c.byName[name]
		if !ok || a.state == allocSubmitting {
			continue // the sbatch answer is what counts
		}
		c.observeAlloc(now, a, byName[name])
	}
}

// observe applies the statuses of one allocation's name.
func (c *jobCore) observeAlloc(now time.Time, a *allocation, all []jobStatus) {
	if a.state == allocUnsure {
		var found JobID
		for _, s := range all {
			if !s.Terminal() && (found == 0 || s.Leader() < found) {
				found = s.Leader()
			}
		}
		if found == 0 {
			if a.withdrawn {
				a.state = allocDone
				c.forget(a)
				return
			}
			c.submit(a) // it never reached Slurm
			return
		}
		a.job, a.state, a.since = found, allocPending, now
		if a.withdrawn {
			c.end(a)
		}
	}
	var mine []jobStatus
	for _, s := range all {
		switch {
		case s.Leader() == a.job:
			mine = append(mine, s)
		default:
			// Another job of our name: a submit retried after an outage
			// that had reached Slurm. Only one is ours; a live duplicate is
			// cancelled (again, if its cancel failed), an ended one is done.
			c.failedDups = slices.DeleteFunc(c.failedDups, func(cmd slurmCommand) bool { return cmd.Job == s.Leader() })
			if !s.Terminal() && !c.dups[s.Leader()] {
				c.dups[s.Leader()] = true
				c.cmds = append(c.cmds, slurmCommand{Kind: cmdCancel, Name: a.name, Job: s.Leader()})
			}
		}
	}
	slices.SortFunc(mine, func(x, y jobStatus) int { return x.HetOffset - y.HetOffset })
	ended, running, preempted, requeued := len(mine) == 0, len(mine) > 0, false, false
	for _, s := range mine {
		if s.Terminal() {
			ended = true
		}
		if s.State == "PENDING" || strings.HasPrefix(s.State, "REQUEUE") {
			requeued = true // after it ran: preempted with PreemptMode=REQUEUE
		}
		if s.State != "RUNNING" || len(s.Nodes) == 0 {
			running = false
		}
		preempted = preempted || s.Preempted
		a.priority = s.Priority
		if s.State == "PENDING" {
			a.reason = s.Reason
		}
	}
	switch a.state {
	case allocPending:
		switch {
		case ended || preempted:
			if a.withdrawn {
				a.state = allocDone
				c.forget(a)
				return
			}
			c.submit(a) // it ended without an allocation: ask Slurm again
		case running:
			c.grant(a, mine)
		}
	case allocGranted:
		switch {
		case ended:
			c.revoke(a) // preempted, or gone: the slots are lost
			a.state = allocDone
		case requeued:
			c.revoke(a) // its allocation is gone; the requeued job is not wanted
			c.end(a)
		case preempted && !a.reclaimed:
			// Slurm decided to preempt it and grants it its partition's
			// GraceTime: the pool gives each slot back once no task runs in
			// it (the last one cancels the job), and whatever still runs when
			// the job ends is revoked.
			a.reclaimed = true
			for _, id := range a.slots {
				if s, ok := c.slots[id]; ok && !s.revoked {
					c.out = append(c.out, slotpool.Reclaim{Slot: id})
				}
			}
		}
	case allocEnding:
		if ended {
			a.state = allocDone
			c.forget(a)
		} else if !a.cancel {
			c.end(a)
		}
	}
}

// grant turns a running allocation into slots: on each node of each
// component, as many slots as its CPUs hold.
func (c *jobCore) grant(a *allocation, comps []jobStatus) {
	a.state = allocGranted
	var slots []slotpool.Slot
	for k, comp := range a.req.Components {
		var st jobStatus
		if k < len(comps) {
			st = comps[k]
		}
		group := -1
		if len(a.req.Components) > 1 {
			group = k
		}
		places := spread(st.Nodes, comp)
		for _, node := range places {
			id := c.nextSlot
			c.nextSlot++
			c.slots[id] = &slotState{alloc: a, place: slotPlacement{Job: a.job, HetGroup: group, Node: node, CPUs: comp.CPUsPerTask}}
			a.slots = append(a.slots, id)
			slots = append(slots, slotpool.Slot{ID: id, Profile: comp.Profile})
		}
	}
	a.live = len(slots)
	c.out = append(c.out, slotpool.Grant{Ask: a.ask, Slots: slots})
}

// spread places a component's slots on the nodes of its allocation, in
// node order, each node as many as its CPUs hold; if Slurm reported fewer
// CPUs than the slots need, the rest go round the nodes (the allocation
// holds them all: the job runs).
func spread(nodes []nodeCPUs, comp component) []string {
	places := make([]string, 0, comp.Tasks)
	for _, n := range nodes {
		for k := 0; k < n.CPUs/comp.CPUsPerTask && len(places) < comp.Tasks; k++ {
			places = append(places, n.Node)
		}
	}
	for i := 0; len(places) < comp.Tasks && len(nodes) > 0; i++ {
		places = append(places, nodes[i%len(nodes)].Node)
	}
	for len(places) < comp.Tasks {
		places = append(places, "")
	}
	return places
}

// revoke takes an allocation's live slots back (ReasonPreempted); the
// pool echoes each with a SlotRelease.
func (c *jobCore) revoke(a *allocation) {
	for _, id := range a.slots {
		if s, ok := c.slots[id]; ok && !s.revoked {
			s.revoked = true
			c.out = append(c.out, slotpool.Revoke{Slot: id, Reason: slotpool.ReasonPreempted})
		}
	}
}

// ready returns the messages for the pool since the last call.
func (c *jobCore) ready() []slotpool.FromAdmission {
	out := c.out
	c.out = nil
	return out
}

// commands returns the commands to run since the last call, in order.
func (c *jobCore) commands() []slurmCommand {
	cmds := c.cmds
	c.cmds = nil
	return cmds
}

// hasReady reports whether Ready has messages for the pool.
func (c *jobCore) hasReady() bool { return len(c.out) > 0 }

// granted counts the slots granted and not released yet.
func (c *jobCore) granted() int { return len(c.slots) }

// hasCommands reports whether Commands has something to hand out.
func (c *jobCore) hasCommands() bool { return len(c.cmds) > 0 }

// takeRefused returns the errors of asks refused since the last call
// (*TooLargeError, or Slurm's rejection of the sbatch): the pool is not
// told (the seam has no refusal message), so the runtime should fail the
// job.
func (c *jobCore) takeRefused() []error {
	r := c.refused
	c.refused = nil
	return r
}

// placement returns where a granted slot lives.
func (c *jobCore) placement(slot slotpool.SlotID) (slotPlacement, bool) {
	s, ok := c.slots[slot]
	if !ok {
		return slotPlacement{}, false
	}
	return s.place, true
}

// deployPlacement returns where a slot a deployment names lives: a
// granted slot, or one released since the settle before the last one.
// The runtime applies a Ready after the scheduler decided it, and the
// pool may release a slot meanwhile (a failover cancels the tasks just
// deployed in it; Slurm ended its allocation): the deployment still runs
// in the slot's allocation, whose step ends or is refused, and a later
// Ready cancels it.
func (c *jobCore) deployPlacement(slot slotpool.SlotID) (slotPlacement, bool) {
	if p, ok := c.placement(slot); ok {
		return p, true
	}
	for _, gen := range c.retired {
		if p, ok := gen[slot]; ok {
			return p, true
		}
	}
	return slotPlacement{}, false
}

// settle forgets the placements of the slots released before the
// previous settle. The runtime settles right after looking up the
// placements of a Ready's deployments, in the same input: a Driver
// decides its next Ready only once the last one was taken, so a Ready
// decided before a release that came before the previous settle is at
// most the one after that settle's Ready, already applied or the one
// just looked up.
func (c *jobCore) settle() {
	c.retired[1], c.retired[0] = c.retired[0], nil
}

// slurmJobs returns the Slurm jobs of the allocations not over, in ask order,
// with the priority last observed.
func (c *jobCore) slurmJobs() []jobPriority {
	var out []jobPriority
	for _, a := range c.allocs {
		if a.job != 0 && (a.state == allocPending || a.state == allocGranted) {
			out = append(out, jobPriority{Job: a.job, Name: a.name, Priority: a.priority})
		}
	}
	return out
}

// Wait is an ask whose Slurm job waits for its allocation.
type Wait struct {
	Ask  slotpool.AskID
	Name string
	Job  JobID
	// Since is when Slurm took the job; Reason is Slurm's pending reason
	// as last observed ("Resources", "Priority", "ReqNodeNotAvail, ...").
	Since  time.Time
	Reason string
}

// waiting returns the asks whose jobs Slurm holds pending, in ask order.
func (c *jobCore) waiting() []Wait {
	var out []Wait
	for _, a := range c.allocs {
		if a.state == allocPending && !a.withdrawn {
			out = append(out, Wait{Ask: a.ask, Name: a.name, Job: a.job, Since: a.since, Reason: a.reason})
		}
	}
	return out
}

// jobPriority is a Slurm job of the admission and its last observed
// priority.
type jobPriority struct {
	Job      JobID
	Name     string
	Priority int64
}

// shutdown cancels every allocation not over (the runtime is done): the
// commands come out of commands. Cancels of jobs with unknown ids go by
// name. With again, the cancels already issued are issued again too
// (their outcome may never have been reported: the runtime is stopping).
func (c *jobCore) shutdown(again bool) {
	for _, cmd := range c.failedDups {
		if !c.dups[cmd.Job] {
			c.dups[cmd.Job] = true
			c.cmds = append(c.cmds, cmd)
		}
	}
	c.failedDups = nil
	for _, a := range c.allocs {
		if a.state != allocDone && (again || !(a.state == allocEnding && a.cancel)) {
			a.withdrawn = true
			a.cancel = true
			a.state = allocEnding
			c.cmds = append(c.cmds, slurmCommand{Kind: cmdCancel, Name: a.name, Job: a.job})
		}
	}
}

// setPartition takes a new description of the partition (its nodes'
// states changed: drained, down, back in service). Every ask not granted
// yet that can no longer fit is refused (Refused: a *TooLargeError that
// names the nodes out of service) and its job cancelled; granted slots
// are Slurm's to keep or revoke.
func (c *jobCore) setPartition(p partition) {
	c.part = p
	for _, a := range slices.Clone(c.allocs) {
		if a.withdrawn || a.state == allocGranted || a.state >= allocEnding {
			continue
		}
		err := c.fits(a.ask, a.req)
		if err == nil {
			continue
		}
		c.refused = append(c.refused, err)
		a.withdrawn = true
		if a.state == allocPending {
			c.end(a)
		}
	}
}

// isUnreachable reports whether err leaves a command's outcome unknown.
func isUnreachable(err error) bool { return errors.Is(err, ErrUnreachable) }

var commandNames = [...]string{"", "submit", "cancel", "set-priority"}

// String returns "submit", "cancel" or "set-priority".
func (k commandKind) String() string {
	if int(k) < len(commandNames) && k > 0 {
		return commandNames[k]
	}
	return fmt.Sprintf("commandKind(%d)", uint8(k))
}
