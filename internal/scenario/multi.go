package scenario

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// epoch is virtual time 0.
var epoch = time.Unix(0, 0)

// Multi is the multi-job harness: one multijob.Scheduler over an
// in-process admission (admission.Queues), and a tiny runtime around it
// that deploys what it is told, finishes each task after its duration
// and starts a job once its driver is up, in virtual time; each scenario
// file shows what the admission decides at every instant. The zero value
// is ready: the first command must be cluster. After every decision the
// admission's invariants are checked (internal/inspect).
//
// Times are virtual: "500ms", "1s", or a bare number of milliseconds.
// The commands:
//
//	cluster slots=N [policy=P] [reclaim=D] [starting=D] [max-running=N] [guaranteed=N] [max=N]
//	    a new Scheduler over an admission.Queues of N slots (ids 0 ... N-1); the options configure
//	    root.default (policy fifo unless given; reclaim absent: never
//	    preempt; guaranteed and max: its guaranteed and maximum
//	    slots). Input lines configure more:
//	      queue NAME [policy=P] [reclaim=D] [starting=D] [max-running=N] [guaranteed=N] [max=N]
//	      user NAME ROLE
//	submit name=J [at=T] [prio=P] [queue=Q] [user=U] [regions=N,N,...]
//	       [chain] [dur=D|manual] [driver[=STARTUP]] [gang[=N]]
//	       [gang-style=hard|soft] [gang-timeout=D]
//	    a job of independent regions of N slots each (r0, r1, ...; chain:
//	    each region consumes the one before through a blocking edge, so it
//	    asks for slots once that one finished), every task running D (1s
//	    by default; D,D,...: one per region; manual: until a finish
//	    command). Or a job file as the input (JSON, as in examples/jobs:
//	    durations and submission fields from it, the options above
//	    override them), or file=F of examples/jobs. A driver starts its
//	    job STARTUP (1s by default) after it got its slot. A gang without
//	    N reserves region.Regions.GangMinSlots.
//	set-priority job=J prio=P by=U [at=T]
//	kill job=J by=U [at=T]
//	    by a user of the cluster's user lines (anyone else has no role)
//	    speculation[=B] turns speculative execution on for the job
//	    (scheduler.DefaultSpeculation with a baseline lower bound of B,
//	    0 by default); slow=TASK:D,... makes the first attempt of the
//	    named tasks (ID#i) run D instead of their duration
//	finish job=J region=R [at=T]
//	    report every running task of region R of job J finished (for
//	    jobs of dur=manual)
//
// Without at=, or at the current time, an input (submit, set-priority,
// kill, finish) is applied at once; a later at= schedules it for advance.
//
//	ready
//	    decide the current instant (multijob.Scheduler.Ready) and print it
//	advance to=T
//	    decide the current instant if it has inputs not yet decided, then
//	    run every instant up to T: apply what happens at it (tasks that
//	    end, drivers that are up, scheduled inputs, due timers), decide,
//	    print; the current time is then T
//	status
//	    each job's admission state, slots held, regions running and
//	    waiting; then each slot asked back from the job that holds it, and
//	    for whom: by a claim (it comes back when its task ends) or a
//	    preemption
//	queues
//	    every queue of the hierarchy, by name: the slots it (with its
//	    children) holds, its guaranteed and maximum slots
//	kept
//	    the slots the admission keeps for jobs with nothing of theirs in
//	    them: gang placeholders, free slots reserved for a claim
//	audit
//	    the audit records (JSON Lines, t in ms) of the priority changes
//	    and kills since the last audit command, accepted or refused
//
// What a decision prints, under "@T" (T the instant), in this order: the
// inputs applied at it (by advance), the admission's events (reclaims,
// state changes but new -> accepted, drivers granted, placeholders,
// speculative slots granted), each job's cancels, each job's speculative
// attempts asked for ("speculate rR/A") and races won ("rR won by
// attempt A"), each job's deployments (speculative ones apart), the jobs
// that ended. A
// deployment or cancel reads rR@S: region R in slot S (rR@S,T: a region
// of two slots); rR/A@S is attempt A of a region that was restarted.
type Multi struct {
	s         *multijob.Scheduler
	q         *admission.Queues
	audit     strings.Builder // the audit log since the last audit command
	slots     int
	users     map[string]admission.Role
	now       time.Duration
	undecided bool // inputs at now since the last Ready
	jobs      map[string]*hjob
	running   []*htask                 // tasks deployed, not ended
	starts    map[string]time.Duration // jobs whose driver is up then
	scheduled []*hinput
	seq       int
	applied   []string // what advance applied at the current instant
}

// hjob is a submitted job.
type hjob struct {
	name    string
	rs      *region.Regions
	dur     []time.Duration // per job vertex; negative: manual
	startup time.Duration
	driver  bool
	slow    map[string]time.Duration // first attempts of these tasks run this long
}

// htask is a task the runtime runs.
type htask struct {
	job     string
	task    scheduler.TaskID
	attempt scheduler.Attempt
	slot    scheduler.SlotID
	region  scheduler.RegionID
	end     time.Duration // negative: manual
}

// hinput is an input scheduled for a later instant.
type hinput struct {
	at    time.Duration
	seq   int
	apply func() string
}

// Run runs one command (datadriven.RunTest's callback).
func (h *Multi) Run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "cluster" && h.s == nil {
		td.Fatalf(t, "%s before cluster", td.Cmd)
	}
	switch td.Cmd {
	case "cluster":
		return h.cmdCluster(t, td)
	case "submit":
		return h.cmdSubmit(t, td)
	case "set-priority", "kill", "finish":
		return h.cmdInput(t, td)
	case "ready":
		return h.decide(t)
	case "advance":
		return h.cmdAdvance(t, td)
	case "status":
		return h.cmdStatus(t)
	case "kept":
		return h.cmdKept()
	case "queues":
		return h.cmdQueues()
	case "audit":
		return h.cmdAudit()
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// queueConfig reads a queue's options from kv (key=value fields).
func queueConfig(t *testing.T, td *datadriven.TestData, name string, kv map[string]string) admission.QueueConfig {
	qc := admission.QueueConfig{Name: name}
	for k, v := range kv {
		switch k {
		case "policy":
			p, err := admission.ParsePolicy(v)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			qc.Policy = p
		case "reclaim":
			qc.Preempt, qc.ReclaimTimeout = true, ParseDur(t, td, k, v)
		case "starting":
			qc.StartingTimeout = ParseDur(t, td, k, v)
			if qc.StartingTimeout == 0 {
				qc.StartingTimeout = admission.NoStartingWait
			}
		case "max-running":
			qc.MaxRunningJobs = ParseInt(t, td, k, v)
		case "guaranteed":
			qc.GuaranteedSlots = ParseInt(t, td, k, v)
		case "max":
			qc.MaxSlots = ParseInt(t, td, k, v)
		case "slots":
		default:
			td.Fatalf(t, "unknown queue option %s", k)
		}
	}
	return qc
}

// describeQueue renders a queue's configuration.
func describeQueue(qc admission.QueueConfig) string {
	s := fmt.Sprintf("%s: %s", qc.Name, qc.Policy)
	if qc.Preempt {
		s += fmt.Sprintf(", reclaim after %s", Ms(qc.ReclaimTimeout))
	} else {
		s += ", never reclaims"
	}
	switch {
	case qc.StartingTimeout == admission.NoStartingWait:
		s += ", starting timeout 0ms"
	case qc.StartingTimeout > 0:
		s += ", starting timeout " + Ms(qc.StartingTimeout)
	}
	if qc.MaxRunningJobs > 0 {
		s += fmt.Sprintf(", at most %d running", qc.MaxRunningJobs)
	}
	if qc.GuaranteedSlots > 0 {
		s += fmt.Sprintf(", guaranteed %s", Plural(qc.GuaranteedSlots, "slot"))
	}
	if qc.MaxSlots > 0 {
		s += fmt.Sprintf(", at most %s", Plural(qc.MaxSlots, "slot"))
	}
	return s
}

// ---- setup ----

func (h *Multi) cmdCluster(t *testing.T, td *datadriven.TestData) string {
	kv := map[string]string{}
	for _, a := range td.CmdArgs {
		kv[a.Key] = strings.Join(a.Vals, ",")
	}
	n := ParseInt(t, td, "slots", MustStr(t, td, "slots"))
	slots := make([]slotpool.Slot, n)
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i)}
	}
	queues := []admission.QueueConfig{queueConfig(t, td, "root.default", kv)}
	*h = Multi{slots: n, users: map[string]admission.Role{}, jobs: map[string]*hjob{},
		starts: map[string]time.Duration{}}
	for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "queue" && len(f) >= 2:
			qkv := map[string]string{}
			for _, o := range f[2:] {
				k, v, _ := strings.Cut(o, "=")
				qkv[k] = v
			}
			queues = append(queues, queueConfig(t, td, f[1], qkv))
		case f[0] == "user" && len(f) == 3:
			role, err := admission.ParseRole(f[2])
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			h.users[f[1]] = role
		default:
			td.Fatalf(t, "cluster: bad line %q", line)
		}
	}
	q, err := admission.New(admission.Config{Slots: slots, Queues: queues, Audit: admission.NewJSONLinesAudit(&h.audit, epoch)})
	if err != nil {
		return "error: " + err.Error()
	}
	s, err := multijob.New(multijob.Config{Cluster: q})
	if err != nil {
		return "error: " + err.Error()
	}
	h.s, h.q = s, q
	out := []string{fmt.Sprintf("%d slots", n)}
	for _, qc := range queues {
		out = append(out, describeQueue(qc))
	}
	return strings.Join(out, "\n") + "\n"
}
