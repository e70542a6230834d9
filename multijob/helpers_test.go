package multijob

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// t0 is the time of the first input of every test.
var t0 = time.Unix(1000, 0)

// ms is t0 plus n milliseconds.
func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// cluster lists n slots with ids 0 ... n-1.
func cluster(n int) []slotpool.Slot {
	out := make([]slotpool.Slot, n)
	for i := range out {
		out[i] = slotpool.Slot{ID: slotpool.SlotID(i)}
	}
	return out
}

// blockingJob: src(n) -hash, blocking-> sink(1); every subtask is a region
// of one slot, and the sink waits for every source.
func blockingJob(t testing.TB, n int) *region.Regions {
	t.Helper()
	g, err := topology.NewBuilder("blocking").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: n}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	return region.FromJob(g, exchange.AllBlocking)
}

// pipelinedJob: src(n) -hash, pipelined-> sink(n), one region of n slots
// (each slot shared by a source and a sink).
func pipelinedJob(t testing.TB, n int) *region.Regions {
	t.Helper()
	g, err := topology.NewBuilder("pipelined").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: n}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: n}).
		Connect("src", "sink", exchange.Hash).
		Build()
	require.NoError(t, err)
	return region.FromJob(g, exchange.AllPipelined)
}

// fairShare returns a Scheduler over n slots whose root.default queue is
// fairshare.
func fairShare(t testing.TB, n int) *Scheduler {
	t.Helper()
	s, err := New(Config{Admission: admission.Config{Slots: cluster(n), DefaultPolicy: admission.FairShare}})
	require.NoError(t, err)
	return s
}

// deploys counts each job's deployments in rd.
func deploys(rd Ready) map[string]int {
	out := map[string]int{}
	for _, jr := range rd.Jobs {
		if len(jr.Deploy) > 0 {
			out[jr.Job] += len(jr.Deploy)
		}
	}
	return out
}

// jobReady returns job's Ready in rd (the zero value if none).
func jobReady(rd Ready, job string) scheduler.Ready {
	for _, jr := range rd.Jobs {
		if jr.Job == job {
			return jr.Ready
		}
	}
	return scheduler.Ready{}
}

// events renders the admission's events of rd as "job: kind from->to"
// lines (the reasons left out) and "job: driver in slot N".
func events(rd Ready) []string {
	var out []string
	for _, ev := range rd.Events {
		switch ev.Kind {
		case admission.StateChanged:
			out = append(out, fmt.Sprintf("%s: %v -> %v", ev.Job, ev.From, ev.To))
		case admission.DriverGranted:
			out = append(out, fmt.Sprintf("%s: driver in slot %d", ev.Job, ev.Slot))
		default:
			out = append(out, fmt.Sprintf("%s: event %d", ev.Job, ev.Kind))
		}
	}
	return out
}

// finishAll reports every deployment of job in rd finished at now.
func finishAll(t testing.TB, s *Scheduler, now time.Time, rd Ready, job string) {
	t.Helper()
	for _, d := range jobReady(rd, job).Deploy {
		require.NoError(t, s.TaskFinished(now, job, d.Task, d.Attempt))
	}
}

// slotsOf returns the slots job deploys into in rd, sorted.
func slotsOf(rd Ready, job string) []slotpool.SlotID {
	var out []slotpool.SlotID
	for _, d := range jobReady(rd, job).Deploy {
		out = append(out, d.Slot)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
