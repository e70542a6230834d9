package simulator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

const jobsDir = "../examples/jobs"

// loadJob decodes a job file.
func loadJob(t testing.TB, path string) *topology.JobGraph {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	job, err := topology.Decode(f)
	require.NoError(t, err, path)
	return job
}

// flip119 is the FLIP-119 example job.
func flip119(t testing.TB) *topology.JobGraph { return testjobs.FLIP119(t) }

// jobFiles globs the example jobs (more are added over time).
func jobFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(jobsDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// slots is a cluster of n unknown-sized slots.
func slots(n int) []resource.Count { return []resource.Count{{Profile: resource.Unknown, N: n}} }

// hasUnbounded reports whether the job has a streaming vertex.
func hasUnbounded(job *topology.JobGraph) bool {
	for jv := range topology.JobVertexID(job.NumVertices()) {
		if job.Vertex(jv).Unbounded {
			return true
		}
	}
	return false
}

// run simulates and fails the test on a configuration error.
func run(t testing.TB, cfg simulator.Config) *simulator.Result {
	t.Helper()
	res, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.NotNil(t, res)
	return res
}

// clusterProfiles lists the profile of every slot id, in the simulator's
// numbering: the cluster's counts in order, each capped at the number of
// tasks (a run never uses more slots of one profile than there are tasks).
func clusterProfiles(cluster []resource.Count, tasks int) []resource.Profile {
	var out []resource.Profile
	for _, c := range cluster {
		for range min(c.N, tasks) {
			out = append(out, c.Profile)
		}
	}
	return out
}

type regionAttempt struct {
	region, attempt int
}

// traceStats summarizes a checked trace.
type traceStats struct {
	maxInUse  int
	shared    bool // some slot held more than one task at once
	withdrawn int  // withdraw events
}

// checkTrace verifies the invariants every recorded run must satisfy and
// returns the first violation, or nil:
//   - events are in time order, the last one at the makespan if finished;
//   - every deploy is preceded by a request of the same task and attempt,
//     of a task that is not deployed;
//   - a task asks again (a request) only once its previous request was
//     deployed or withdrawn, and a withdraw (no slot) ends an open
//     request of that task and attempt;
//   - under the region policy, the tasks of a region deploy at the same
//     virtual time, all of them (per attempt);
//   - no task deploys before the blocking partitions it reads from other
//     regions are finished (from the topology: the producers of each
//     blocking input group of the task, outside its region);
//   - never more slots in use than exist; a slot is never used by two
//     regions (or two attempts) at once; without sharing (eager) a slot
//     holds one task; the tasks in a slot fit its profile;
//   - finish, fail and cancel close an open deploy of that task, attempt
//     and slot; a finish comes no earlier than deploy + duration;
//   - every slot that becomes empty gets a release event at that moment,
//     and releases only happen then;
//   - the utilization recomputed from the trace matches the Result.
//
// checkSharedDeploy checks a deploy of v into a slot its hybrid producers
// hold: the slot is in use, a hybrid producer of v's region runs in it,
// and every occupant of another region is of v's slot sharing group and
// of another job vertex.
func checkSharedDeploy(rs *region.Regions, v topology.ExecutionVertexID, occupants map[string]bool, byName map[string]topology.ExecutionVertexID) error {
	if len(occupants) == 0 {
		return fmt.Errorf("shared deploy into an empty slot")
	}
	topo := rs.Topology()
	job := topo.Job()
	r := rs.RegionOf(v)
	producers := map[topology.ExecutionVertexID]bool{}
	for _, w := range rs.Members(r) {
		for _, e := range job.InEdges(topo.JobVertexOf(w)) {
			if !topo.PartitionType(e).IsHybrid() {
				continue
			}
			g := topo.Group(topo.ConsumedGroup(e, topo.SubtaskIndex(w)))
			for p := g.Producers.Start; p < g.Producers.End; p++ {
				producers[topology.ExecutionVertexID(p)] = true
			}
		}
	}
	host := false
	for name := range occupants {
		u := byName[name]
		if rs.RegionOf(u) == r {
			host = true // a slot mate of its own region, placed in the same wave
			continue
		}
		host = host || producers[u]
		if topo.JobVertexOf(u) == topo.JobVertexOf(v) {
			return fmt.Errorf("shared with %s of the same job vertex", name)
		}
		if a, b := job.Vertex(topo.JobVertexOf(u)).SlotSharingGroup, job.Vertex(topo.JobVertexOf(v)).SlotSharingGroup; a != b {
			return fmt.Errorf("shared with %s of slot sharing group %q, not %q", name, a, b)
		}
	}
	if !host {
		return fmt.Errorf("shared into a slot where no hybrid producer of its region runs")
	}
	return nil
}

func checkTrace(rs *region.Regions, cluster []resource.Count, policy simulator.Policy, res *simulator.Result) (traceStats, error) {
	var st traceStats
	topo := rs.Topology()
	job := topo.Job()
	profiles := clusterProfiles(cluster, topo.NumExecutionVertices())
	byName := map[string]topology.ExecutionVertexID{}
	for v := range topo.NumExecutionVertices() {
		byName[topo.VertexName(topology.ExecutionVertexID(v))] = topology.ExecutionVertexID(v)
	}
	type open struct {
		attempt, slot int
		at            time.Duration
	}
	type slotState struct {
		occupants      map[string]bool
		region         regionAttempt
		pendingRelease bool
		since          time.Duration
		busy           time.Duration
		used           bool
	}
	deployed := map[string]open{}
	// requested holds the open requests: the attempt each task asked for
	// a slot with, not deployed or withdrawn since
	requested := map[string]int{}
	finished := make([]bool, topo.NumExecutionVertices())
	regionDeploy := map[regionAttempt]time.Duration{}
	regionDeployCount := map[regionAttempt]int{}
	slotsState := make([]slotState, len(profiles))
	inUse := 0
	var last time.Duration
	for i, ev := range res.Events {
		where := fmt.Sprintf("event %d (%s %s attempt %d slot %d at %v)", i, ev.Kind, ev.Task, ev.Attempt, ev.Slot, ev.At)
		if ev.At < last {
			return st, fmt.Errorf("%s: out of time order (previous at %v)", where, last)
		}
		last = ev.At
		v, ok := byName[ev.Task]
		if !ok {
			return st, fmt.Errorf("%s: unknown task", where)
		}
		if want := int(rs.RegionOf(v)); ev.Region != want {
			return st, fmt.Errorf("%s: region %d, want %d", where, ev.Region, want)
		}
		if ev.Kind == runfile.Request {
			if ev.Slot != runfile.NoSlot {
				return st, fmt.Errorf("%s: a request carries a slot", where)
			}
			if a, open := requested[ev.Task]; open {
				return st, fmt.Errorf("%s: its request of attempt %d is still open (neither deployed nor withdrawn)", where, a)
			}
			requested[ev.Task] = ev.Attempt
			finished[v] = false
			continue
		}
		if ev.Kind == runfile.Withdraw {
			if ev.Slot != runfile.NoSlot {
				return st, fmt.Errorf("%s: a withdraw carries a slot", where)
			}
			if a, open := requested[ev.Task]; !open || a != ev.Attempt {
				return st, fmt.Errorf("%s: withdraws no open request of that attempt", where)
			}
			delete(requested, ev.Task)
			st.withdrawn++
			continue
		}
		if ev.Slot < 0 || ev.Slot >= len(profiles) {
			return st, fmt.Errorf("%s: slot out of range [0, %d)", where, len(profiles))
		}
		s := &slotsState[ev.Slot]
		switch ev.Kind {
		case runfile.Deploy:
			if a, open := requested[ev.Task]; !open || a != ev.Attempt {
				return st, fmt.Errorf("%s: deploy without a request of that attempt", where)
			}
			delete(requested, ev.Task)
			if _, ok := deployed[ev.Task]; ok {
				return st, fmt.Errorf("%s: task already deployed", where)
			}
			if s.pendingRelease {
				return st, fmt.Errorf("%s: slot reused before its release event", where)
			}
			ra := regionAttempt{ev.Region, ev.Attempt}
			if ev.Shared {
				if err := checkSharedDeploy(rs, v, s.occupants, byName); err != nil {
					return st, fmt.Errorf("%s: %w", where, err)
				}
				st.shared = true
			} else if len(s.occupants) > 0 {
				if s.region != ra {
					return st, fmt.Errorf("%s: slot held by region %d attempt %d too", where, s.region.region, s.region.attempt)
				}
				if policy == simulator.EagerPolicy {
					return st, fmt.Errorf("%s: eager policy shares a slot", where)
				}
				st.shared = true
			} else {
				if s.occupants == nil {
					s.occupants = map[string]bool{}
				}
				s.region, s.since, s.used = ra, ev.At, true
				inUse++
				st.maxInUse = max(st.maxInUse, inUse)
				if inUse > len(profiles) {
					return st, fmt.Errorf("%s: %d slots in use of %d", where, inUse, len(profiles))
				}
			}
			s.occupants[ev.Task] = true
			// the tasks in the slot fit its profile
			need := resource.Unknown
			for name := range s.occupants {
				need = need.Add(job.Vertex(topo.JobVertexOf(byName[name])).Resources)
			}
			if !need.FitsIn(profiles[ev.Slot]) {
				return st, fmt.Errorf("%s: slot of %v holds tasks needing %v", where, profiles[ev.Slot], need)
			}
			deployed[ev.Task] = open{attempt: ev.Attempt, slot: ev.Slot, at: ev.At}
			finished[v] = false
			if policy == simulator.RegionPolicy {
				if at, ok := regionDeploy[ra]; ok && at != ev.At {
					return st, fmt.Errorf("%s: region %d attempt %d deployed at %v and %v", where, ra.region, ra.attempt, at, ev.At)
				}
				regionDeploy[ra] = ev.At
				regionDeployCount[ra]++
			}
			// blocking inputs from other regions are finished, hybrid
			// ones deployed (or finished)
			jv := topo.JobVertexOf(v)
			sub := topo.SubtaskIndex(v)
			for _, e := range job.InEdges(jv) {
				pt := topo.PartitionType(e)
				if pt.IsPipelined() {
					continue
				}
				g := topo.Group(topo.ConsumedGroup(e, sub))
				for p := g.Producers.Start; p < g.Producers.End; p++ {
					pv := topology.ExecutionVertexID(p)
					if rs.RegionOf(pv) == rs.RegionOf(v) || finished[pv] {
						continue
					}
					if !pt.IsHybrid() {
						return st, fmt.Errorf("%s: deployed before %s (region %d) finished its blocking partition",
							where, topo.VertexName(pv), rs.RegionOf(pv))
					}
					// (the eager policy keeps a request its producer's
					// failure made early)
					if _, running := deployed[topo.VertexName(pv)]; !running && policy == simulator.RegionPolicy {
						return st, fmt.Errorf("%s: deployed before its hybrid producer %s (region %d) was deployed",
							where, topo.VertexName(pv), rs.RegionOf(pv))
					}
				}
			}
		case runfile.Finish, runfile.Fail, runfile.Cancel:
			o, ok := deployed[ev.Task]
			if !ok {
				return st, fmt.Errorf("%s: closes no open deploy", where)
			}
			if o.attempt != ev.Attempt || o.slot != ev.Slot {
				return st, fmt.Errorf("%s: open deploy is attempt %d in slot %d", where, o.attempt, o.slot)
			}
			if ev.Kind == runfile.Finish {
				d := job.Vertex(topo.JobVertexOf(v)).Duration
				if ev.At-o.at < d {
					return st, fmt.Errorf("%s: finished %v after its deploy, its duration is %v", where, ev.At-o.at, d)
				}
				// never before a pipelined or hybrid producer
				for _, e := range job.InEdges(topo.JobVertexOf(v)) {
					if pt := topo.PartitionType(e); !pt.IsPipelined() && !pt.IsHybrid() {
						continue
					}
					g := topo.Group(topo.ConsumedGroup(e, topo.SubtaskIndex(v)))
					for p := g.Producers.Start; p < g.Producers.End; p++ {
						if !finished[p] {
							return st, fmt.Errorf("%s: finished before its producer %s", where, topo.VertexName(topology.ExecutionVertexID(p)))
						}
					}
				}
				finished[v] = true
			}
			delete(deployed, ev.Task)
			delete(s.occupants, ev.Task)
			if len(s.occupants) == 0 {
				s.pendingRelease = true
			}
		case runfile.Release:
			if !s.pendingRelease {
				return st, fmt.Errorf("%s: release of a slot that did not become empty", where)
			}
			s.pendingRelease = false
			s.busy += ev.At - s.since
			inUse--
		default:
			return st, fmt.Errorf("%s: unknown kind", where)
		}
		// a release follows the event that emptied the slot at once
		if ev.Kind != runfile.Release && ev.Kind != runfile.Request {
			for j := range slotsState {
				if slotsState[j].pendingRelease && j != ev.Slot {
					return st, fmt.Errorf("%s: slot %d became empty without a release event", where, j)
				}
			}
		}
	}
	for j := range slotsState {
		if slotsState[j].pendingRelease {
			return st, fmt.Errorf("slot %d became empty without a release event at the end", j)
		}
	}
	// a finished job ends with its last finish; otherwise the last
	// calendar event may be a task pausing, which the trace does not show
	if len(res.Events) > 0 && (last > res.Makespan || res.Verdict == runfile.Finished && last != res.Makespan) {
		return st, fmt.Errorf("last event at %v, makespan %v", last, res.Makespan)
	}
	if policy == simulator.RegionPolicy {
		for ra, n := range regionDeployCount {
			if n != rs.Size(region.ID(ra.region)) {
				return st, fmt.Errorf("region %d attempt %d: %d of %d tasks deployed", ra.region, ra.attempt, n, rs.Size(region.ID(ra.region)))
			}
		}
	}
	var busy time.Duration
	for j := range slotsState {
		busy += slotsState[j].busy
		if len(slotsState[j].occupants) > 0 {
			busy += res.Makespan - slotsState[j].since
		}
	}
	size := 0 // the cluster's real size, not just the modelled slots
	for _, c := range cluster {
		size += c.N
	}
	if res.Slots != size {
		return st, fmt.Errorf("result says %d slots, the cluster has %d", res.Slots, size)
	}
	if res.Makespan > 0 && size > 0 {
		u := float64(busy) / (float64(res.Makespan) * float64(size))
		if d := u - res.Utilization; d > 1e-9 || d < -1e-9 {
			return st, fmt.Errorf("utilization from the trace %.6f, result says %.6f", u, res.Utilization)
		}
	}
	return st, nil
}

// requireTrace fails the test if checkTrace finds a violation.
func requireTrace(t testing.TB, rs *region.Regions, cluster []resource.Count, policy simulator.Policy, res *simulator.Result, msg ...any) traceStats {
	t.Helper()
	st, err := checkTrace(rs, cluster, policy, res)
	require.NoError(t, err, msg...)
	return st
}

// modes are the global data exchange modes.
var modes = exchange.Modes()

// tiesFor is the tie order a property test over seeds runs seed with:
// one seed in four in order (the default, where a seed changes the offer
// of slots and the eager policy's grants), the others seeded, each ending
// the tasks of a wave in another order.
func tiesFor(seed uint64) simulator.TieOrder {
	if seed%4 == 1 {
		return simulator.TiesInOrder
	}
	return simulator.TiesSeeded
}
