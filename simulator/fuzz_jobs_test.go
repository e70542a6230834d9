package simulator_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/inspect"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// FuzzRunJobs writes, from a seed, the files of a random multi-job run
// (a cluster file with one or two sizes of slots, on nodes or not, and
// queues of every policy with maxRunningJobs, reclaim and starting
// timeouts, guarantees and maxima, nested or not; a default queue policy;
// two to four job files with queues (configured or made on the fly),
// users, priorities, arrival times, drivers, gangs, hybrid
// exchanges and now and then a stream; an events file of priority changes
// and kills, some unauthorized; now and then stragglers and speculative
// execution), decodes them as the command line does, and
// runs them under the region policy and the eager one:
//
//   - nothing panics, and a configuration the admission refuses is
//     refused with an error, the same each time;
//   - the trace keeps the rules it shows (checkJobsTrace: no slot runs
//     tasks of two jobs or a task beside a driver, no driver preempted,
//     no queue over its maxSlots, a job killed by an event is reported
//     killed and no task of it finishes after its instant, nor its
//     driver at all);
//   - under the region policy the admission's invariants hold after
//     every decision (internal/inspect.CheckInvariants: its bookkeeping,
//     no idle slot beside a waiting job, reservations only for claims
//     that complete, reclaims only within the guarantees and only for
//     claimants that may progress, an instant's slots decided together);
//   - every job ends with a verdict, a reason unless it finished, and
//     times in order; the run's verdict is Finished only if every job
//     finished or was killed;
//   - under the region policy no job deadlocks unless drivers or streams
//     take part;
//   - the same files give the same trace, audit and results;
//   - under the region policy, without stragglers, the jobs given in the
//     reverse order (simultaneous inputs) give every job the same result.
//
// `go test -fuzz FuzzRunJobs ./simulator/` explores seeds without end; CI
// runs the seed corpus.
func FuzzRunJobs(f *testing.F) {
	for seed := range uint64(64) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		files := genRunFiles(seed)
		cfg, err := fuzzJobsConfig(files)
		require.NoError(t, err, "the generated files:\n%s", files)
		// Drivers, never preempted, may fill the cluster (as in YuniKorn:
		// what StateAware and maxRunningJobs are for), and a stream holds
		// its slots for good: with either, a run may deadlock.
		mayDeadlock := false
		for _, j := range cfg.Jobs {
			mayDeadlock = mayDeadlock || j.Job.Submission().Driver != nil || hasUnbounded(j.Job)
		}
		for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
			cfg.Policy = policy
			first, err := fuzzRunJobs(cfg)
			if err != nil {
				// A run ends: every job finished, nothing can progress, or
				// only streams run (a periodic timer, such as the
				// speculation detector's, must not keep it going).
				require.NotContains(t, err.Error(), "events; the run was stopped", "under %s\n%s", policy, files)
				require.NotEmpty(t, err.Error())
				_, again := fuzzRunJobs(cfg)
				require.Equal(t, err, again, "the same files, another error")
				continue
			}
			require.Len(t, first.jobs, len(cfg.Jobs))
			require.Empty(t, first.broken, "under %s, the admission's invariants\n%s", policy, files)
			require.NoError(t, checkJobsTrace(cfg, first), "under %s\n%s", policy, files)
			all := true
			for _, j := range first.jobs {
				require.NotEqual(t, "invalid", j.Verdict.String(), "job %s", j.Name)
				if policy == simulator.RegionPolicy && !mayDeadlock {
					require.NotEqual(t, runfile.Deadlock, j.Verdict, "job %s: %s\n%s\n%+v", j.Name, j.Reason, files, first.jobs)
				}
				if j.Verdict == runfile.Finished {
					require.Empty(t, j.Reason, "job %s", j.Name)
					require.GreaterOrEqual(t, j.Finished, j.FirstDeploy, "job %s", j.Name)
					require.GreaterOrEqual(t, j.FirstDeploy, j.Submitted, "job %s", j.Name)
				} else {
					require.NotEmpty(t, j.Reason, "job %s ended %s without a reason", j.Name, j.Verdict)
				}
				all = all && (j.Verdict == runfile.Finished || j.Verdict == runfile.Killed)
			}
			require.Equal(t, all, first.res.Verdict == runfile.Finished, "the run's verdict %s, the jobs %+v", first.res.Verdict, first.jobs)
			again, err := fuzzRunJobs(cfg)
			require.NoError(t, err)
			require.Equal(t, first, again, "the same files, another run")
			if policy == simulator.RegionPolicy && cfg.Stragglers == 0 {
				// (Which attempts straggle is drawn in the jobs' order.)
				reversed := cfg
				reversed.Jobs = slices.Clone(cfg.Jobs)
				slices.Reverse(reversed.Jobs)
				other, err := fuzzRunJobs(reversed)
				require.NoError(t, err)
				slices.Reverse(other.jobs)
				require.Equal(t, first.jobs, other.jobs, "the jobs given in the reverse order\n%s", files)
			}
		}
	})
}

// runFiles are the input files of a multi-job run, as text.
type runFiles struct {
	cluster, events string
	jobs            []string
	mode            exchange.Mode
	// policy is the command line's --queue-policy: of the queues the
	// cluster file leaves out.
	policy admission.Policy
	// stragglers, factor and spec are the command line's straggler model
	// and speculation.
	stragglers, factor float64
	spec               scheduler.Speculation
}

// String prints the files, for a failure's message.
func (f runFiles) String() string {
	return fmt.Sprintf("mode %s, queue policy %s, stragglers %v x%v, speculation %+v\ncluster: %s\nevents:\n%s\njobs:\n%s",
		f.mode, f.policy, f.stragglers, f.factor, f.spec, f.cluster, f.events, strings.Join(f.jobs, "\n"))
}

// genRunFiles writes the files of FuzzRunJobs' run of a seed.
func genRunFiles(seed uint64) runFiles {
	rng := rand.New(rand.NewPCG(seed, 0xf11e5))
	// more draws what the files of a seed did not always have (the
	// default queue policy, starting timeouts, queues made on the fly),
	// so that the files of a seed keep what they had.
	more := rand.New(rand.NewPCG(seed, 0x30e))
	pick := func(options ...string) string { return options[rng.IntN(len(options))] }
	maybe := func(field string, values ...string) string {
		if rng.IntN(2) == 0 {
			return ""
		}
		return fmt.Sprintf(", %q: %s", field, pick(values...))
	}
	var f runFiles
	f.mode = exchange.Modes()[rng.IntN(len(exchange.Modes()))]
	f.policy = []admission.Policy{admission.FIFO, admission.Priority, admission.FairShare, admission.StateAware}[more.IntN(4)]

	if rng.IntN(3) == 0 {
		f.stragglers, f.factor = 0.1*float64(1+rng.IntN(5)), float64(2+rng.IntN(8))
		if rng.IntN(2) == 0 {
			f.spec = scheduler.Speculation{Enabled: true, BaselineRatio: 0.5, BaselineMultiplier: 1.5, BaselineLowerBound: 20 * time.Millisecond,
				CheckInterval: 10 * time.Millisecond, MaxConcurrentExecutions: 2 + rng.IntN(2), BlockSlowNodeDuration: time.Duration(rng.IntN(2)) * 100 * time.Millisecond}
		}
	}
	large := `{"cpuMillis": 4000, "memoryMB": 4096}`
	node := func(i int) string { return pick("", fmt.Sprintf(`, "node": "n%d"`, i)) }
	slots := fmt.Sprintf(`{"count": %d%s}`, 2+rng.IntN(7), node(0))
	if rng.IntN(2) == 0 {
		slots = fmt.Sprintf(`{"count": %d, "resources": {"cpuMillis": 1000, "memoryMB": 1024}%s}, {"count": %d, "resources": %s%s}`,
			2+rng.IntN(4), node(1), 1+rng.IntN(4), large, node(2))
	}
	// Guarantees and maxima that hold together (children's guarantees
	// within their parent's, a guarantee within its max, a max within its
	// parent's): the run, not the validation, is under test.
	guaranteed := map[string]int{}
	for _, name := range []string{"root.default", "root.a", "root.p.b", "root.p.c"} {
		if rng.IntN(2) == 0 {
			guaranteed[name] = 1 + rng.IntN(3)
		}
	}
	if rng.IntN(2) == 0 {
		guaranteed["root.p"] = guaranteed["root.p.b"] + guaranteed["root.p.c"] + rng.IntN(2)
	}
	var queues []string
	pmax := 0 // root.p's maxSlots, if it has one
	for _, name := range []string{"root.p", "root.default", "root.a", "root.p.b", "root.p.c"} {
		if g := guaranteed[name]; name != "root.p" && g > 0 && guaranteed["root.p"] == 0 && strings.HasPrefix(name, "root.p.") {
			delete(guaranteed, name) // no guarantee under a parent without one
		}
		if rng.IntN(3) == 0 && guaranteed[name] == 0 {
			continue
		}
		q := fmt.Sprintf(`{"name": %q`, name) +
			maybe("policy", `"fifo"`, `"priority"`, `"fairshare"`, `"stateaware"`) +
			maybe("maxRunningJobs", "1", "2") +
			maybe("reclaimTimeoutMs", "0", "0", "50", "300")
		if g := guaranteed[name]; g > 0 {
			q += fmt.Sprintf(`, "guaranteedSlots": %d`, g)
		}
		if more.IntN(3) == 0 {
			q += fmt.Sprintf(`, "startingTimeoutMs": %d`, 50*more.IntN(4))
		}
		if rng.IntN(2) == 0 {
			m := guaranteed[name] + 1 + rng.IntN(6)
			if strings.HasPrefix(name, "root.p.") && pmax > 0 {
				m = min(m, pmax)
			}
			if name == "root.p" {
				pmax = m
			}
			q += fmt.Sprintf(`, "maxSlots": %d`, m)
		}
		queues = append(queues, q+"}")
	}
	f.cluster = fmt.Sprintf(`{"slots": [%s], "queues": [%s], "users": [{"name": "alice", "role": "admin"}, {"name": "bob", "role": "user"}]}`,
		slots, strings.Join(queues, ", "))

	n := 2 + rng.IntN(3)
	var names []string
	for i := range n {
		name := fmt.Sprintf("j%d", i)
		names = append(names, name)
		var vertices, edges []string
		nv, prev := 1+rng.IntN(3), 0
		for v := range nv {
			res := ""
			if rng.IntN(4) == 0 {
				res = `, "resources": ` + large
			}
			if rng.IntN(15) == 0 {
				res += `, "bounded": false` // a stream: it runs until the others end
			}
			par := 1 + rng.IntN(3)
			vertices = append(vertices, fmt.Sprintf(`{"id": "v%d", "parallelism": %d, "durationMs": %d%s}`, v, par, 10*(1+rng.IntN(20)), res))
			if v > 0 {
				ship := pick(`"hash"`, `"rescale"`)
				if par == prev && rng.IntN(2) == 0 {
					ship = `"forward"`
				}
				edges = append(edges, fmt.Sprintf(`{"source": "v%d", "target": "v%d", "shipStrategy": %s, "exchange": %s}`,
					v-1, v, ship, pick(`"pipelined"`, `"blocking"`, `"pipelined"`, `"blocking"`, `"hybrid-full"`, `"hybrid-selective"`)))
			}
			prev = par
		}
		job := fmt.Sprintf(`{"name": %q, "vertices": [%s], "edges": [%s]`, name, strings.Join(vertices, ", "), strings.Join(edges, ", ")) +
			maybe("queue", `"root.default"`, `"root.a"`, `"root.p.b"`, `"root.p.c"`) +
			maybe("user", `"bob"`, `"carol"`) +
			maybe("priority", "1", "1000", "5000", "9000", "10000") +
			maybe("submitAtMs", "0", "0", "10", "100", "250")
		if more.IntN(6) == 0 {
			// A queue the cluster file leaves out, made for the job with
			// the default policy (a job file names its queue once).
			job = queueField.ReplaceAllString(job, "") + `, "queue": "root.x.y"`
		}
		if rng.IntN(4) == 0 {
			job += fmt.Sprintf(`, "driver": {"startupMs": %s%s}`, pick("0", "10", "100"), pick("", `, "resources": {"cpuMillis": 1000, "memoryMB": 1024}`))
		}
		if rng.IntN(5) == 0 {
			job += fmt.Sprintf(`, "gang": {"minSlots": %d, "style": %s, "timeoutMs": %s}`, 1+rng.IntN(4), pick(`"soft"`, `"hard"`), pick("0", "50", "500"))
		}
		f.jobs = append(f.jobs, job+"}")
	}
	var events []string
	for range rng.IntN(4) {
		job, by := names[rng.IntN(len(names))], pick(`"alice"`, `"bob"`, `"carol"`)
		if rng.IntN(3) == 0 {
			events = append(events, fmt.Sprintf(`{"t": %d, "event": "kill", "job": %q, "by": %s}`, 10*rng.IntN(30), job, by))
		} else {
			events = append(events, fmt.Sprintf(`{"t": %d, "event": "set-priority", "job": %q, "priority": %d, "by": %s}`, 10*rng.IntN(30), job, 1+rng.IntN(10000), by))
		}
	}
	f.events = strings.Join(events, "\n")
	return f
}

// queueField is a job file's "queue" field, as genRunFiles writes it.
var queueField = regexp.MustCompile(`, "queue": "[a-z.]+"`)

// fuzzJobsRun is what a run of FuzzRunJobs produced.
type fuzzJobsRun struct {
	res    *simulator.Result
	jobs   []simulator.JobResult
	events []runfile.Event
	audit  string
	// broken is the first violation of the admission's invariants after
	// a decision ("" if none), with the trace time it was found at.
	broken string
}

// fuzzRunJobs runs cfg with its trace and audit recorded.
func fuzzRunJobs(cfg simulator.JobsConfig) (fuzzJobsRun, error) {
	var out fuzzJobsRun
	var audit bytes.Buffer
	cfg.Audit = admission.NewJSONLinesAudit(&audit, simulator.Epoch)
	cfg.OnEvent = func(e runfile.Event) { out.events = append(out.events, e) }
	cfg.MaxEvents = 1 << 16
	defer simulator.OnDecided(func(m *multijob.Scheduler) {
		q, ok := inspect.AdmissionOf(m)
		if !ok {
			out.broken = "no in-process admission"
			return
		}
		if err := inspect.CheckInvariants(q); err != nil && out.broken == "" {
			at := time.Duration(0)
			if n := len(out.events); n > 0 {
				at = out.events[n-1].At
			}
			out.broken = fmt.Sprintf("after the decision at or after %v: %v", at, err)
		}
	})()
	var err error
	out.res, out.jobs, err = simulator.RunJobs(cfg)
	out.audit = audit.String()
	return out, err
}

// fuzzJobsConfig decodes the files as the command line does.
func fuzzJobsConfig(f runFiles) (cfg simulator.JobsConfig, err error) {
	c, err := runfile.DecodeCluster([]byte(f.cluster))
	if err != nil {
		return cfg, err
	}
	cfg.Cluster, cfg.SlotNodes, cfg.DefaultPolicy = c.Counts(), c.SlotNodes(), f.policy
	if cfg.Queues, err = c.QueueConfigs(f.policy); err != nil {
		return cfg, err
	}
	if cfg.Users, err = c.Roles(); err != nil {
		return cfg, err
	}
	var names []string
	for _, data := range f.jobs {
		g, err := topology.DecodeBytes([]byte(data))
		if err != nil {
			return cfg, err
		}
		cfg.Jobs = append(cfg.Jobs, runfile.Job{Name: g.Name(), Job: g})
		names = append(names, g.Name())
	}
	if cfg.Events, err = runfile.ReadEvents(strings.NewReader(f.events), "events.jsonl", names, topology.MaxPriority); err != nil {
		return cfg, err
	}
	cfg.Mode, cfg.Record = f.mode, true
	cfg.Stragglers, cfg.StragglerFactor, cfg.Speculation = f.stragglers, f.factor, f.spec
	return cfg, nil
}

// checkJobsTrace checks the trace of a multi-job run (every event
// OnEvent got) against the rules it shows: in time order; every slot of
// the cluster; never tasks of two jobs, nor a driver and anything else, in
// a slot at once (a task is in its slot from its deploy until the slot's
// release); a driver cancelled only in a job that did not finish (drivers
// are never preempted); and, under the region policy, no queue holding
// more slots than its maxSlots, its subtree included, once an instant's
// events are in.
func checkJobsTrace(cfg simulator.JobsConfig, run fuzzJobsRun) error {
	nSlots := 0
	for _, c := range cfg.Cluster {
		nSlots += c.N
	}
	maxSlots := map[string]int{}
	for _, qc := range cfg.Queues {
		if qc.MaxSlots > 0 {
			maxSlots[qc.Name] = qc.MaxSlots
		}
	}
	queueOf, verdict := map[string]string{}, map[string]runfile.Verdict{}
	arrives := map[string]time.Duration{}
	for _, j := range cfg.Jobs {
		arrives[j.Name] = j.Job.Submission().SubmitAt
		if queueOf[j.Name] = j.Job.Submission().Queue; queueOf[j.Name] == "" {
			queueOf[j.Name] = "root.default"
		}
	}
	for _, j := range run.jobs {
		verdict[j.Name] = j.Verdict
	}
	// When each job was killed (an applied kill of the events file): its
	// tasks are cancelled at once, none finishes from then on.
	killedAt := map[string]time.Duration{}
	for _, out := range run.res.JobEvents {
		if out.Applied && out.Action == admission.ActionKill {
			if _, again := killedAt[out.Job]; again {
				return fmt.Errorf("job %s killed twice: %v", out.Job, out)
			}
			killedAt[out.Job] = out.At
			if verdict[out.Job] != runfile.Killed {
				return fmt.Errorf("job %s killed at %v ends %s", out.Job, out.At, verdict[out.Job])
			}
		}
	}
	type attempt struct {
		job, task string
		attempt   int
	}
	in := make([]map[attempt]bool, nSlots)
	held := func(capped string) int { // slots held under a queue, its subtree included
		n := 0
		for _, occupants := range in {
			for o := range occupants {
				if q := queueOf[o.job]; q == capped || strings.HasPrefix(q, capped+".") {
					n++
				}
				break
			}
		}
		return n
	}
	// Every request ends in a deploy or a withdrawal before the task asks
	// again, or still waits when the run ends, its job not ended.
	open := map[[2]string]runfile.Event{}
	events := run.events
	for i, e := range events {
		if i > 0 && e.At < events[i-1].At {
			return fmt.Errorf("event %d (%+v): out of time order (previous at %v)", i, e, events[i-1].At)
		}
		switch k := [2]string{e.Job, e.Task}; e.Kind {
		case runfile.Request:
			if e.At < arrives[e.Job] {
				return fmt.Errorf("event %d (%+v): a request before its job arrives at %v", i, e, arrives[e.Job])
			}
			if prev, ok := open[k]; ok {
				return fmt.Errorf("event %d (%+v): asks again, its request at %v (attempt %d) neither deployed nor withdrawn", i, e, prev.At, prev.Attempt)
			}
			open[k] = e
		case runfile.Withdraw:
			delete(open, k)
		}
		switch e.Kind {
		case runfile.Finish:
			if at, killed := killedAt[e.Job]; killed && (e.At > at || e.Task == runfile.DriverTask) {
				return fmt.Errorf("event %d (%+v): a task of a job killed at %v finishes", i, e, at)
			}
		case runfile.Cancel:
			if e.Task == runfile.DriverTask && verdict[e.Job] == runfile.Finished {
				return fmt.Errorf("event %d (%+v): the driver of a job that finished was cancelled", i, e)
			}
		case runfile.Deploy, runfile.Release:
			if e.Slot < 0 || e.Slot >= nSlots {
				return fmt.Errorf("event %d (%+v): slot %d of a cluster of %d", i, e, e.Slot, nSlots)
			}
			if e.Kind == runfile.Release { // (one per slot, naming its last task)
				clear(in[e.Slot])
				break
			}
			if e.Kind == runfile.Deploy {
				delete(open, [2]string{e.Job, e.Task})
			}
			for o := range in[e.Slot] {
				if o.job != e.Job || o.task == runfile.DriverTask || e.Task == runfile.DriverTask {
					return fmt.Errorf("event %d (%+v): deployed beside %s of job %s (attempt %d) in slot %d", i, e, o.task, o.job, o.attempt, e.Slot)
				}
			}
			if in[e.Slot] == nil {
				in[e.Slot] = map[attempt]bool{}
			}
			in[e.Slot][attempt{e.Job, e.Task, e.Attempt}] = true
		}
		if cfg.Policy == simulator.RegionPolicy && (i+1 == len(events) || events[i+1].At > e.At) {
			for q, m := range maxSlots {
				if n := held(q); n > m {
					return fmt.Errorf("at %v queue %s holds %d slots, over its maxSlots %d", e.At, q, n, m)
				}
			}
		}
	}
	for _, e := range open {
		switch verdict[e.Job] {
		case runfile.Finished, runfile.Failed, runfile.Killed:
			return fmt.Errorf("job %s ended %s with its request of %s at %v (attempt %d) open", e.Job, verdict[e.Job], e.Task, e.At, e.Attempt)
		}
	}
	return nil
}
