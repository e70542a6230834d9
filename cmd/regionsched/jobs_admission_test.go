package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The admission's rules in runs of several jobs, seen from the command
// line: fair share decided per instant, freed slots going back to the
// admission, the order of reclaim victims, reclaims withdrawn when their
// reason is gone, and no slot kept idle beside a job it would serve.

// admissionEvent is one line of a --trace file of a run of several jobs,
// every field a line may carry: a task's event, a refused change (by,
// reason) or a reclaim (victim, slots, reason).
type admissionEvent struct {
	T       *int64 `json:"t"`
	Event   string `json:"event"`
	Job     string `json:"job"`
	Task    string `json:"task"`
	Region  *int   `json:"region"`
	Slot    *int   `json:"slot"`
	Attempt int    `json:"attempt"`
	Victim  string `json:"victim"`
	Slots   int    `json:"slots"`
	Reason  string `json:"reason"`
	By      string `json:"by"`
}

// readAdmissionTrace reads a trace strictly: every line one object of
// known fields, with a time.
func readAdmissionTrace(t *testing.T, path string) []admissionEvent {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []admissionEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e admissionEvent
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&e), "trace line %q", sc.Text())
		require.NotNil(t, e.T, "trace line %q has no t", sc.Text())
		out = append(out, e)
	}
	require.NoError(t, sc.Err())
	return out
}

// simulateTraced runs simulate with a trace file and returns the result
// and the trace.
func simulateTraced(t *testing.T, args ...string) (cliResult, []admissionEvent) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	res := execCLI(t, "", append([]string{"simulate", "--trace", trace}, args...)...)
	require.Empty(t, res.stderr)
	return res, readAdmissionTrace(t, trace)
}

// ofKind returns the events of a kind, in trace order, with their index
// in the trace.
func ofKind(tr []admissionEvent, kind string) (events []admissionEvent, at []int) {
	for i, e := range tr {
		if e.Event == kind {
			events = append(events, e)
			at = append(at, i)
		}
	}
	return events, at
}

// describe renders trace events compactly for assertions:
// "800 low long#0 attempt 0".
func describe(events []admissionEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%d %s %s attempt %d", *e.T, e.Job, e.Task, e.Attempt)
	}
	return out
}

// deploysAt counts the deployments of each job at time ms.
func deploysAt(tr []admissionEvent, ms int64) map[string]int {
	out := map[string]int{}
	for _, e := range tr {
		if e.Event == "deploy" && *e.T == ms {
			out[e.Job]++
		}
	}
	return out
}

// requireReclaimBefore checks that a reclaim event of claimant from
// victim for slots slots is among the trace's lines lo ... hi-1, where
// line hi is the cancel it causes: before it, no later than it, and no
// earlier than from (ms).
func requireReclaimBefore(t *testing.T, tr []admissionEvent, lo, hi int, claimant, victim string, slots int, from int64) {
	t.Helper()
	for i := hi - 1; i >= lo; i-- {
		if e := tr[i]; e.Event == "reclaim" && e.Job == claimant && e.Victim == victim {
			assert.Equal(t, slots, e.Slots, "reclaim %+v", e)
			assert.NotEmpty(t, e.Reason, "a reclaim says why")
			assert.GreaterOrEqual(t, *e.T, from)
			assert.LessOrEqual(t, *e.T, *tr[hi].T)
			return
		}
	}
	assert.Failf(t, "no reclaim event", "no reclaim of %s from %s before the cancel of %s at %d ms (trace line %d)",
		claimant, victim, tr[hi].Task, *tr[hi].T, hi+1)
}

// Two equal one-vertex jobs of 16 one-slot tasks submitted together on a
// fairshare queue of 8 slots hold 4 + 4 from 0 ms, and at every wave,
// whichever file comes first.
func TestSimulateFairShareEqualJobsSplitAtOnce(t *testing.T) {
	a := writeTemp(t, "a.json", `{"name": "a", "vertices": [{"id": "v", "parallelism": 16}]}`)
	b := writeTemp(t, "b.json", `{"name": "b", "vertices": [{"id": "v", "parallelism": 16}]}`)
	for _, files := range [][]string{{a, b}, {b, a}} {
		res, tr := simulateTraced(t, append([]string{"--slots", "8", "--queue-policy", "fairshare"}, files...)...)
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, "finished: all 2 jobs finished at 4000 ms", lastLine(res.stdout))
		for _, ms := range []int64{0, 1000, 2000, 3000} {
			assert.Equal(t, map[string]int{"a": 4, "b": 4}, deploysAt(tr, ms), "at %d ms", ms)
		}
		cancels, _ := ofKind(tr, "cancel")
		assert.Empty(t, cancels)
	}
}

// Priorities 1000 and 3000 on a fairshare queue of 4 slots: the shares
// are 1 and 3, and every wave runs 1 + 3 while both have tasks left; a
// slot the low job frees is not its own to keep.
func TestSimulateFairShareByPriority(t *testing.T) {
	low := writeTemp(t, "low.json", `{"name": "low", "priority": 1000, "vertices": [{"id": "v", "parallelism": 12}]}`)
	high := writeTemp(t, "high.json", `{"name": "high", "priority": 3000, "vertices": [{"id": "v", "parallelism": 12}]}`)
	for _, files := range [][]string{{low, high}, {high, low}} {
		res, tr := simulateTraced(t, append([]string{"--slots", "4", "--queue-policy", "fairshare"}, files...)...)
		require.Equal(t, 0, res.code, res.stdout)
		for _, ms := range []int64{0, 1000, 2000, 3000} {
			assert.Equal(t, map[string]int{"low": 1, "high": 3}, deploysAt(tr, ms), "at %d ms", ms)
		}
		// high is done at 4000 ms; low has the cluster to itself.
		assert.Equal(t, map[string]int{"low": 4}, deploysAt(tr, 4000))
		assert.Equal(t, map[string]int{"low": 4}, deploysAt(tr, 5000))
		assert.Equal(t, "finished: all 2 jobs finished at 6000 ms", lastLine(res.stdout))
		cancels, _ := ofKind(tr, "cancel")
		assert.Empty(t, cancels)
	}
}

// A late equal job: first holds all 8 slots of a fairshare queue when
// late arrives at 500 ms. Each slot first frees goes to late until they
// hold 4 + 4, though first still waits for more; nothing is cancelled
// (no reclaim timeout).
func TestSimulateFairShareLateJobGetsFreedSlots(t *testing.T) {
	late := writeTemp(t, "late.json", `{"name": "late", "submitAtMs": 500, "vertices": [{"id": "v", "parallelism": 8}]}`)
	t.Run("slots freed together", func(t *testing.T) {
		first := writeTemp(t, "first.json", `{"name": "first", "vertices": [{"id": "v", "parallelism": 16}]}`)
		res, tr := simulateTraced(t, "--slots", "8", "--queue-policy", "fairshare", first, late)
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, map[string]int{"first": 8}, deploysAt(tr, 0))
		assert.Equal(t, map[string]int{"first": 4, "late": 4}, deploysAt(tr, 1000))
		assert.Equal(t, map[string]int{"first": 4, "late": 4}, deploysAt(tr, 2000))
		cancels, _ := ofKind(tr, "cancel")
		assert.Empty(t, cancels)
		assert.Equal(t, []string{"500 ms", "1000 ms", "3000 ms", "500 ms", "2500 ms", "finished"}, jobLines(t, res.stdout)["late"])
	})
	t.Run("slots freed one by one", func(t *testing.T) {
		// s0 ... s7 end at 1000, 1100, ... 1700 ms; rest waits.
		var vs []string
		for i := range 8 {
			vs = append(vs, fmt.Sprintf(`{"id": "s%d", "parallelism": 1, "durationMs": %d}`, i, 1000+100*i))
		}
		vs = append(vs, `{"id": "rest", "parallelism": 8}`)
		first := writeTemp(t, "first.json", `{"name": "first", "vertices": [`+strings.Join(vs, ", ")+`]}`)
		res, tr := simulateTraced(t, "--slots", "8", "--queue-policy", "fairshare", first, late)
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, map[string]int{"first": 8}, deploysAt(tr, 0))
		for i, job := range []string{"late", "late", "late", "late", "first", "first", "first", "first"} {
			ms := int64(1000 + 100*i)
			assert.Equal(t, map[string]int{job: 1}, deploysAt(tr, ms), "the slot freed at %d ms", ms)
		}
		cancels, _ := ofKind(tr, "cancel")
		assert.Empty(t, cancels)
	})
}

// fairshare-idle-slot-deadlock: j5 runs a two-slot region on both slots
// of a fairshare queue until 1000 ms and waits with another; j0 arrives
// at 100 ms with a driver. Once j0's driver is up its one-slot region
// asks, and the free slot serves it at once: a slot is not kept free for
// j5's two-slot region, which cannot complete while j0's driver holds
// the other slot (that was a deadlock at 2000 ms with slot 0 idle). Every
// queue policy finishes.
func TestSimulateIdleSlotFairShare(t *testing.T) {
	const dir = "fairshare-idle-slot-deadlock"
	files := []string{repro(dir, "j0.json"), repro(dir, "j5.json")}
	for _, policy := range []string{"fairshare", "fifo", "priority", "stateaware"} {
		t.Run(policy, func(t *testing.T) {
			res, tr := simulateTraced(t, append([]string{"--queue-policy", policy, "--slots", "2"}, files...)...)
			require.Equal(t, 0, res.code, res.stdout)
			assert.Equal(t, "finished: all 2 jobs finished at 4000 ms", lastLine(res.stdout))
			requests, _ := ofKind(tr, "request")
			deploys, _ := ofKind(tr, "deploy")
			var asked, deployed []string
			for _, e := range requests {
				if e.Job == "j0" {
					asked = append(asked, fmt.Sprintf("%d %s", *e.T, e.Task))
				}
			}
			for _, e := range deploys {
				if e.Job == "j0" && e.Task != "driver" {
					deployed = append(deployed, fmt.Sprintf("%d %s", *e.T, e.Task))
				}
			}
			require.Len(t, asked, 1, "j0 asks once")
			assert.Equal(t, asked, deployed, "j0's region deploys when it asks")
		})
	}
}

// idle-slot-deadlock-drivers: j0 and j5 arrive together on 3 slots, each
// with a driver (slots 0 and 1). j0's one-slot region takes slot 2 at
// 1000 ms and ends at 2000 ms; then j0 waits for a two-slot region it
// cannot have while j5's driver holds a slot, so slot 2 goes to j5's
// one-slot region at 2000 ms (that was a deadlock with slot 2 idle).
// Also under priority and stateaware, and with the files swapped.
func TestSimulateIdleSlotDrivers(t *testing.T) {
	const dir = "idle-slot-deadlock-drivers"
	j0, j5 := repro(dir, "j0.json"), repro(dir, "j5.json")
	res, tr := simulateTraced(t, "--mode", "all-pipelined", "--queue-policy", "fifo", "--slots", "3", j0, j5)
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "finished: all 2 jobs finished at 4000 ms", lastLine(res.stdout))
	deploys, _ := ofKind(tr, "deploy")
	var j5Deploys []string
	for _, e := range deploys {
		if e.Job == "j5" {
			j5Deploys = append(j5Deploys, fmt.Sprintf("%d %s slot %d", *e.T, e.Task, *e.Slot))
		}
	}
	assert.Equal(t, []string{"0 driver slot 1", "2000 join0#0 slot 2"}, j5Deploys)
	lines := jobLines(t, res.stdout)
	// first deploy is the first task's (drivers do not count)
	assert.Equal(t, []string{"0 ms", "1000 ms", "4000 ms", "1000 ms", "4000 ms", "finished"}, lines["j0"])
	assert.Equal(t, []string{"0 ms", "2000 ms", "3000 ms", "2000 ms", "3000 ms", "finished"}, lines["j5"])

	for _, c := range []struct {
		policy string
		files  []string
	}{{"priority", []string{j0, j5}}, {"stateaware", []string{j0, j5}}, {"fifo", []string{j5, j0}}} {
		t.Run(c.policy+" "+filepath.Base(c.files[0])+" first", func(t *testing.T) {
			res := execCLI(t, "", append([]string{"simulate", "--mode", "all-pipelined", "--queue-policy", c.policy, "--slots", "3"}, c.files...)...)
			require.Equal(t, 0, res.code, res.stdout)
			assert.True(t, strings.HasPrefix(lastLine(res.stdout), "finished: all 2 jobs finished at "), res.stdout)
		})
	}
}

// reclaim-victim-order: on a priority queue of 2 slots with a reclaim
// timeout of 300 ms, low (1000) holds long#0 and mid (5000) holds the
// other slot when high (9000) arrives at 500 ms: the victim is low, the
// lowest priority, not mid, the most recent holder. long#0 is cancelled
// at 800 ms (the timeout), high deploys then, long#0 runs again when
// high is done. The trace reports the reclaim before the cancel.
func TestSimulateReclaimVictimLowestPriority(t *testing.T) {
	const dir = "reclaim-victim-order"
	res, tr := simulateTraced(t, "--cluster", repro(dir, "cluster.json"),
		repro(dir, "low.json"), repro(dir, "mid.json"), repro(dir, "high.json"))
	require.Equal(t, 0, res.code, res.stdout)
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "0 ms", "6800 ms", "0 ms", "6800 ms", "finished"}, lines["low"])
	assert.Equal(t, []string{"100 ms", "200 ms", "3200 ms", "100 ms", "3100 ms", "finished"}, lines["mid"])
	assert.Equal(t, []string{"500 ms", "800 ms", "1800 ms", "300 ms", "1300 ms", "finished"}, lines["high"])
	assert.Equal(t, "finished: all 3 jobs finished at 6800 ms", lastLine(res.stdout))
	cancels, at := ofKind(tr, "cancel")
	require.Equal(t, []string{"800 low long#0 attempt 0"}, describe(cancels))

	t.Run("the trace reports the reclaim before the cancel", func(t *testing.T) {
		requireReclaimBefore(t, tr, 0, at[0], "high", "low", 1, 500)
		reclaims, _ := ofKind(tr, "reclaim")
		for _, e := range reclaims {
			assert.NotEqual(t, "mid", e.Victim, "mid is never a victim: %+v", e)
		}
	})
}

// stale-reclaim-after-priority-drop: low (5000) holds both slots with
// 5 s tasks; high (9000) arrives at 100 ms and its reclaim would cancel
// one of them at 1100 ms (timeout 1000 ms). At 200 ms alice lowers high
// to 1000: the reclaim is withdrawn, nothing is cancelled, high runs
// when low's tasks end at 5000 ms.
func TestSimulateReclaimWithdrawnAfterPriorityDrop(t *testing.T) {
	const dir = "stale-reclaim-after-priority-drop"
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	res, tr := simulateTraced(t, "--cluster", repro(dir, "cluster.json"), "--events", repro(dir, "events.jsonl"), "--audit", audit,
		repro(dir, "low.json"), repro(dir, "high.json"))
	require.Equal(t, 0, res.code, res.stdout)
	cancels, _ := ofKind(tr, "cancel")
	assert.Empty(t, describe(cancels), "nothing is cancelled for a reason that no longer holds")
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "0 ms", "5000 ms", "0 ms", "5000 ms", "finished"}, lines["low"])
	assert.Equal(t, []string{"100 ms", "5000 ms", "6000 ms", "4900 ms", "5900 ms", "finished"}, lines["high"])
	assert.Equal(t, "finished: all 2 jobs finished at 6000 ms", lastLine(res.stdout))
	data, err := os.ReadFile(audit)
	require.NoError(t, err)
	assert.Equal(t, `{"t":200,"by":"alice","role":"admin","action":"set-priority","job":"high","old":9000,"new":1000,"accepted":true}`,
		strings.TrimSpace(string(data)))
}

// victim-order-fairshare: priorities 1 (j0), 5000 (j5) and 10000 (j3) on
// a fairshare queue of 4 slots with a reclaim timeout of 0. j3 arrives at
// 500 ms and takes j0's slot; at 1500 ms its two sources ask and it
// takes j0's slot again (j0 had it back at 1000 ms). j5, of a higher
// priority than j0, is never the victim: its tasks run once, to
// 3000 ms. Under the priority policy too.
func TestSimulateReclaimVictimOrderFairShare(t *testing.T) {
	const dir = "victim-order-fairshare"
	jobs := []string{repro(dir, "j0.json"), repro(dir, "j3.json"), repro(dir, "j5.json")}
	for _, policy := range []string{"fairshare", "priority"} {
		t.Run(policy, func(t *testing.T) {
			cluster := gangVariant(t, repro(dir, "cluster.json"), `"fairshare"`, fmt.Sprintf("%q", policy))
			res, tr := simulateTraced(t, append([]string{"--cluster", cluster}, jobs...)...)
			require.Equal(t, 0, res.code, res.stdout)
			cancels, at := ofKind(tr, "cancel")
			finishes, _ := ofKind(tr, "finish")
			for _, f := range finishes {
				if f.Job == "j5" {
					assert.Equal(t, 0, f.Attempt, "j5 runs once: %+v", f)
				}
			}
			lines := jobLines(t, res.stdout)
			assert.Equal(t, []string{"0 ms", "0 ms", "3000 ms", "0 ms", "3000 ms", "finished"}, lines["j5"])
			require.Equal(t, []string{"500 j0 join0#0 attempt 0", "1500 j0 join0#0 attempt 1"}, describe(cancels))
			assert.Equal(t, "finished: all 3 jobs finished at 3500 ms", lastLine(res.stdout))
			t.Run("the trace reports each reclaim before its cancel", func(t *testing.T) {
				lo := 0
				for _, hi := range at {
					requireReclaimBefore(t, tr, lo, hi, "j3", "j0", 1, 500)
					lo = hi + 1
				}
			})
		})
	}
}

// priority-inversion-at-job-end: on a priority queue of 3 slots, j1 ends
// at 3000 ms (its last task and its driver: 2 slots back) while j7
// (7000, its driver up) waits for a region of exactly 2 slots; j6
// arrives then in root.adhoc, whose driver's region could not follow it.
// The job's end belongs to the instant: both slots go to j7's region,
// j6's driver waits for j7 to end, and every job finishes.
func TestSimulateJobEndSlotsDecidedTogether(t *testing.T) {
	const dir = "priority-inversion-at-job-end"
	res, tr := simulateTraced(t, "--mode", "all-pipelined", "--queue-policy", "priority", "--slots", "3",
		repro(dir, "j1.json"), repro(dir, "j3.json"), repro(dir, "j5.json"), repro(dir, "j6.json"), repro(dir, "j7.json"))
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "finished: all 5 jobs finished at 8000 ms", lastLine(res.stdout))
	assert.Equal(t, map[string]int{"j7": 2}, deploysAt(tr, 3000), "j7 gets both slots of j1's end; j6's driver waits")
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "3000 ms", "6000 ms", "3000 ms", "6000 ms", "finished"}, lines["j7"])
	assert.Equal(t, []string{"3000 ms", "7000 ms", "8000 ms", "4000 ms", "5000 ms", "finished"}, lines["j6"])
	reclaims, _ := ofKind(tr, "reclaim")
	assert.Empty(t, reclaims)
}

// stateaware-reclaim-driver-deadlock: a stateaware queue of 2 slots with
// a reclaim timeout of 0. low (100) is starting (its driver up at
// 1000 ms) when high (5000, with a driver) waits: high reclaims nothing,
// neither while low starts (StateAware holds it back) nor in the instant
// low's first region deploys, nor after (its driver and its first region
// would never fit beside low's driver). It runs once low ends.
func TestSimulateStateAwareReclaimWaitsForStartingJob(t *testing.T) {
	const dir = "stateaware-reclaim-driver-deadlock"
	res, tr := simulateTraced(t, "--cluster", repro(dir, "cluster.json"), repro(dir, "low.json"), repro(dir, "high.json"))
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "finished: all 2 jobs finished at 4000 ms", lastLine(res.stdout))
	for _, kind := range []string{"reclaim", "cancel"} {
		events, _ := ofKind(tr, kind)
		assert.Empty(t, events, kind)
	}
	deploys, _ := ofKind(tr, "deploy")
	assert.Equal(t, []string{"0 low driver attempt 0", "1000 low work#0 attempt 0", "2000 high driver attempt 0", "3000 high work#0 attempt 0"},
		describe(deploys))
}

// stateaware-reclaim-two-starting: the same without high's driver. j4
// (100, with a driver) is starting on a stateaware queue of 2 slots with
// a reclaim timeout of 0; j1 (5000) arrives at 496 ms. At 1000 ms j4's
// first region is granted and deploys: j1, held back until then, takes
// nothing from it in that instant and runs when j4's task ends.
func TestSimulateStateAwareNoReclaimInTheInstantTheStartingJobDeploys(t *testing.T) {
	const dir = "stateaware-reclaim-two-starting"
	res, tr := simulateTraced(t, "--mode", "pointwise-pipelined-only", "--queue-policy", "fairshare", "--cluster", repro(dir, "cluster.json"),
		repro(dir, "j1.json"), repro(dir, "j4.json"))
	require.Equal(t, 0, res.code, res.stdout)
	for _, kind := range []string{"reclaim", "cancel"} {
		events, _ := ofKind(tr, kind)
		assert.Empty(t, events, kind)
	}
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "1000 ms", "2000 ms", "1000 ms", "2000 ms", "finished"}, lines["j4"])
	assert.Equal(t, []string{"496 ms", "2000 ms", "3000 ms", "1504 ms", "2504 ms", "finished"}, lines["j1"])
}

// victim-order-cross-queue: j1 (9000) and j2 (5000) of root.default hold
// a slot each, j3's driver (10000) the third; j4 of root.b waits and
// asks j2's slot back (a claim: it comes when j2's task ends). At
// 3000 ms j3's region reclaims with a timeout of 0: the victim is j2, the
// lowest priority (the slot still runs j2's task), not j1.
func TestSimulateReclaimVictimOrderBesideAnotherQueuesClaim(t *testing.T) {
	const dir = "victim-order-cross-queue"
	res, tr := simulateTraced(t, "--mode", "all-pipelined", "--queue-policy", "priority", "--cluster", repro(dir, "cluster.json"),
		repro(dir, "j1.json"), repro(dir, "j2.json"), repro(dir, "j3.json"), repro(dir, "j4.json"))
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "finished: all 4 jobs finished at 9500 ms", lastLine(res.stdout))
	cancels, at := ofKind(tr, "cancel")
	require.Equal(t, []string{"3000 j2 agg0#0 attempt 0"}, describe(cancels))
	requireReclaimBefore(t, tr, 0, at[0], "j3", "j2", 1, 3000)
	reclaims, _ := ofKind(tr, "reclaim")
	require.Len(t, reclaims, 1)
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"500 ms", "500 ms", "3500 ms", "0 ms", "3000 ms", "finished"}, lines["j1"], "j1 runs once, undisturbed")
}

// A queue's maxSlots caps how many slots it holds, not which: on a
// cluster of a small slot listed first and two large ones, a queue capped
// at 1 runs a task that fits only the large slots at once (a cap that
// counted the slots in the order the cluster lists them would leave it
// waiting forever beside an idle large slot), and one capped at 2 runs
// two such tasks side by side.
func TestSimulateMaxSlotsTakesTheSlotsThatFit(t *testing.T) {
	job := writeTemp(t, "big.json", `{"name": "big", "queue": "root.a", "vertices": [`+
		`{"id": "v", "parallelism": 2, "durationMs": 100, "resources": {"cpuMillis": 1500, "memoryMB": 512}}]}`)
	for _, c := range []struct {
		max      int
		finished string
		deploys  map[string]int
	}{
		{1, "finished: the only job finished at 200 ms", map[string]int{"big": 1}},
		{2, "finished: the only job finished at 100 ms", map[string]int{"big": 2}},
	} {
		cluster := writeTemp(t, "cluster.json", fmt.Sprintf(`{"slots": [`+
			`{"count": 1, "resources": {"cpuMillis": 1000, "memoryMB": 2048}}, `+
			`{"count": 2, "resources": {"cpuMillis": 2000, "memoryMB": 4096}}], `+
			`"queues": [{"name": "root.a", "maxSlots": %d}]}`, c.max))
		res, tr := simulateTraced(t, "--cluster", cluster, job)
		require.Equal(t, 0, res.code, res.stdout)
		assert.Equal(t, c.finished, lastLine(res.stdout), "max %d", c.max)
		assert.Equal(t, c.deploys, deploysAt(tr, 0), "max %d", c.max)
		for _, e := range tr {
			if e.Event == "deploy" {
				assert.NotEqual(t, 0, *e.Slot, "max %d: a task in the small slot: %+v", c.max, e)
			}
		}
	}
}

// A gang is not reserved, nor claimed, for a job whose driver could not
// start beside it within its queues' maxSlots: under a parent capped at
// 3, A (a driver and two one-slot tasks, then two more) runs through
// while B (a driver and two one-slot tasks, a soft gang of 2) waits for
// A's driver to end. B's placeholders, reserved at 300 ms, would hold
// the two slots A's next tasks need, beside a driver that could not
// start, until B's gang timer (15 minutes by default).
func TestSimulateGangWaitsForRoomToStart(t *testing.T) {
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 9}], "queues": [{"name": "root.p", "maxSlots": 3}, {"name": "root.p.a"}, {"name": "root.p.b"}]}`)
	a := writeTemp(t, "a.json", `{"name": "A", "queue": "root.p.a", "driver": {"startupMs": 0}, "vertices": [`+
		`{"id": "x", "parallelism": 2, "durationMs": 300}, {"id": "y", "parallelism": 2, "durationMs": 300}], `+
		`"edges": [{"source": "x", "target": "y", "shipStrategy": "hash", "exchange": "blocking"}]}`)
	b := writeTemp(t, "b.json", `{"name": "B", "queue": "root.p.b", "submitAtMs": 100, "driver": {}, `+
		`"gang": {"minSlots": 2, "style": "soft"}, "vertices": [{"id": "v", "parallelism": 2, "durationMs": 100}]}`)
	res := execCLI(t, "", "simulate", "--cluster", cluster, a, b)
	require.Equal(t, 0, res.code, res.stdout)
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "0 ms", "600 ms", "0 ms", "600 ms", "finished"}, lines["A"])
	assert.Equal(t, []string{"100 ms", "1600 ms", "1700 ms", "1500 ms", "1600 ms", "finished"}, lines["B"])
}

// A parent queue's maxRunningJobs counts the jobs of its children: with
// root.p limited to one, D (root.p.d) waits for A (root.p.c) to end,
// although its own queue runs nothing.
func TestSimulateParentMaxRunningJobs(t *testing.T) {
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 4}], "queues": [{"name": "root.p", "maxRunningJobs": 1}, {"name": "root.p.c"}, {"name": "root.p.d"}]}`)
	a := writeTemp(t, "a.json", `{"name": "A", "queue": "root.p.c", "vertices": [{"id": "x", "parallelism": 1, "durationMs": 100}, {"id": "y", "parallelism": 1, "durationMs": 200}], `+
		`"edges": [{"source": "x", "target": "y", "shipStrategy": "forward", "exchange": "blocking"}]}`)
	d := writeTemp(t, "d.json", `{"name": "D", "queue": "root.p.d", "submitAtMs": 10, "vertices": [{"id": "v", "parallelism": 1, "durationMs": 100}]}`)
	res := execCLI(t, "", "simulate", "--cluster", cluster, a, d)
	require.Equal(t, 0, res.code, res.stdout)
	lines := jobLines(t, res.stdout)
	assert.Equal(t, []string{"0 ms", "0 ms", "300 ms", "0 ms", "300 ms", "finished"}, lines["A"])
	assert.Equal(t, []string{"10 ms", "300 ms", "400 ms", "290 ms", "390 ms", "finished"}, lines["D"])
}

// A driver keeps its slot until its job ends, so it takes none that a
// region of its own job needs: X's driver fits a small slot, and X's
// region b fits only the large one. When X arrives, Y's tasks hold both
// small slots and only the large one is free: X's driver waits for a
// small slot (at 100 ms) rather than take the large one and leave b
// waiting beside it for ever. A driver that fits only the large slot
// leaves b no room in any slot: its job is rejected at once.
func TestSimulateDriverLeavesItsRegionsTheirSlots(t *testing.T) {
	cluster := writeTemp(t, "cluster.json", `{"slots": [{"count": 2, "resources": {"cpuMillis": 1000, "memoryMB": 2048}}, `+
		`{"count": 1, "resources": {"cpuMillis": 2000, "memoryMB": 4096}}]}`)
	y := writeTemp(t, "y.json", `{"name": "Y", "vertices": [{"id": "v", "parallelism": 2, "durationMs": 100, "resources": {"cpuMillis": 1000, "memoryMB": 1024}}]}`)
	job := func(driverCPU int) string {
		return writeTemp(t, "x.json", fmt.Sprintf(`{"name": "X", "submitAtMs": 10, "driver": {"startupMs": 0, "resources": {"cpuMillis": %d, "memoryMB": 512}}, "vertices": [`+
			`{"id": "a", "parallelism": 2, "durationMs": 100, "resources": {"cpuMillis": 1000, "memoryMB": 1024}}, `+
			`{"id": "b", "parallelism": 1, "durationMs": 100, "resources": {"cpuMillis": 1500, "memoryMB": 1024}}], `+
			`"edges": [{"source": "a", "target": "b", "shipStrategy": "rebalance", "exchange": "blocking"}]}`, driverCPU))
	}
	res, tr := simulateTraced(t, "--cluster", cluster, y, job(500))
	require.Equal(t, 0, res.code, res.stdout)
	assert.Equal(t, "finished: all 2 jobs finished at 300 ms", lastLine(res.stdout))
	drivers := 0
	for _, e := range tr {
		if e.Event == "deploy" && e.Task == "driver" {
			drivers++
			assert.NotEqual(t, 2, *e.Slot, "X's driver in the large slot: %+v", e)
			assert.Equal(t, int64(100), *e.T, "X's driver waits for a small slot")
		}
	}
	assert.Equal(t, 1, drivers)

	res = execCLI(t, "", "simulate", "--cluster", cluster, y, job(1500))
	require.Equal(t, 1, res.code, res.stdout)
	assert.Contains(t, res.stdout, `job "X" in queue root.default: its driver leaves too little for its regions in any slot it fits: `+
		`in a slot of {cpu=2000m mem=4096MB}, region 2 {b#0} needs 1 slot at once, and the rest of the queue's cluster can never give it`)
}

// reclaim-victim-counted-once: at 500 ms claimant (root.a.y, 2 of its 6
// guaranteed slots) waits for 5 slots; victim (root.a.x) holds 2, one of
// them asked back for claimant by a claim; other's queue is below its
// guarantee. The reclaim event says 2 slots, the 2 that are cancelled at
// 1200 ms, and the summary counts 2.
func TestSimulateReclaimCountsEachVictimSlotOnce(t *testing.T) {
	const dir = "reclaim-victim-counted-once"
	res, tr := simulateTraced(t, "--cluster", repro(dir, "cluster.json"), repro(dir, "claimant.json"), repro(dir, "victim.json"), repro(dir, "other.json"))
	require.Equal(t, 0, res.code, res.stdout)
	reclaims, _ := ofKind(tr, "reclaim")
	require.Len(t, reclaims, 1)
	assert.Equal(t, "victim", reclaims[0].Victim)
	assert.Equal(t, 2, reclaims[0].Slots)
	cancels, _ := ofKind(tr, "cancel")
	assert.Equal(t, []string{"1200 victim v#1 attempt 0", "1200 victim v#0 attempt 0"}, describe(cancels))
	assert.Contains(t, res.stdout, "\nreclaims:          1 (slots reclaimed: 2, withdrawn before the timeout: 0)\n")
}

// reclaim-across-withdrawn-at-victim-guarantee: at 500 ms j0 (root.a.x,
// 4 of its 5 guaranteed slots) reclaims 1 slot of j1 (root.a.y holds 3,
// guaranteed 1) after 700 ms. At 1000 ms j2 and j3 end and root.a.y holds
// only j1's slot, its guarantee: the reclaim is withdrawn, nothing is
// cancelled at 1200 ms, and j1 runs once, to 2000 ms.
func TestSimulateReclaimAcrossWithdrawnAtVictimGuarantee(t *testing.T) {
	const dir = "reclaim-across-withdrawn-at-victim-guarantee"
	args := []string{"--cluster", repro(dir, "cluster.json"), "--seed", "1"}
	for _, j := range []string{"j0", "j1", "j2", "j3", "j4", "j6"} {
		args = append(args, repro(dir, j+".json"))
	}
	res, tr := simulateTraced(t, args...)
	require.Equal(t, 0, res.code, res.stdout)
	reclaims, _ := ofKind(tr, "reclaim")
	require.Len(t, reclaims, 1)
	assert.Equal(t, int64(500), *reclaims[0].T)
	assert.Equal(t, "j1", reclaims[0].Victim)
	cancels, _ := ofKind(tr, "cancel")
	assert.Empty(t, describe(cancels), "nothing is cancelled: root.a.y would fall below its guarantee")
	assert.Equal(t, []string{"0 ms", "0 ms", "2000 ms", "0 ms", "2000 ms", "finished"}, jobLines(t, res.stdout)["j1"])
	assert.Contains(t, res.stdout, "\nreclaims:          1 (slots reclaimed: 1, withdrawn before the timeout: 1)\n")
}

// claimed-slots-fair-order: b's three first tasks end at 2000 ms, when
// b (root.b), lo and hi (root.a.x, guaranteed 1, by priority) and y
// (root.a.y) each wait for a slot, and lo and hi have claimed two of
// b's. The slots go by the fair order of queues as it changes with each
// grant: b first, then root.a.x (one above its guarantee, as root.a.y;
// first by name) to hi, then y (root.a.y is one above its guarantee,
// root.a.x two). lo runs when y's first task ends, at 2100 ms. The
// order of the job files does not change it.
func TestSimulateClaimedSlotsGoByFairOrder(t *testing.T) {
	const dir = "claimed-slots-fair-order"
	for _, order := range [][]string{{"b", "hi", "lo", "y"}, {"y", "lo", "hi", "b"}, {"lo", "y", "b", "hi"}} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			res, tr := simulateRepro(t, dir, order)
			require.Equal(t, 0, res.code, res.stdout)
			assert.Equal(t, map[string]int{"b": 1, "hi": 1, "y": 1}, deploysAt(tr, 2000))
			assert.Equal(t, map[string]int{"lo": 1}, deploysAt(tr, 2100))
			assert.Contains(t, res.stdout, "\nqueue root.a.y: guaranteed 0, max unlimited, peak 2 slots,")
		})
	}
}

// simulateRepro simulates the jobs of reproducer dir (their files, in
// that order) on its cluster.json, with the trace.
func simulateRepro(t *testing.T, dir string, jobs []string) (cliResult, []admissionEvent) {
	args := []string{"--cluster", repro(dir, "cluster.json")}
	for _, j := range jobs {
		args = append(args, repro(dir, j+".json"))
	}
	return simulateTraced(t, args...)
}

// TestSimulateClaimedSlotsPassQueueAtMax: a slot that came back for a
// claim of j4 (root.b.w) goes by the fair order to the first queue that
// may take it, passing over root.a.x, first but at its maxSlots of 7:
// at 2100 ms j3 of root.b.z (below its guarantee of 3, holding nothing)
// is served, not j4 (root.b.w holds 4 of its 5), whatever the order of
// the job files.
func TestSimulateClaimedSlotsPassQueueAtMax(t *testing.T) {
	const dir = "claimed-slots-queue-at-max"
	for _, order := range [][]string{
		{"j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7", "j8"},
		{"j8", "j7", "j6", "j5", "j4", "j3", "j2", "j1", "j0"},
		{"j4", "j2", "j7", "j0", "j5", "j3", "j8", "j1", "j6"},
	} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			res, tr := simulateRepro(t, dir, order)
			require.Equal(t, 0, res.code, res.stdout)
			assert.Equal(t, map[string]int{"j3": 1}, deploysAt(tr, 2100))
			assert.Contains(t, res.stdout, "finished: all 9 jobs finished at 5000 ms")
		})
	}
}
