package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// runToEnd runs s on n slots, finishing the deployed tasks oldest first
// (a failure of the first attempt of task fail, if fail >= 0), and returns
// every Ready's requests, deploys, cancels and the job's end as text.
func runToEnd(t *testing.T, s *Scheduler, n int, fail TaskID) []string {
	t.Helper()
	now := time.Unix(0, 0)
	slots := make([]Slot, n)
	for i := range slots {
		slots[i] = Slot{ID: slotpool.SlotID(i), Profile: resource.Unknown}
	}
	require.NoError(t, s.Offer(now, slots...))
	require.NoError(t, s.Start(now))
	var log []string
	var running []Deployment
	failed := false
	for range 100_000 {
		rd := s.Ready()
		for _, r := range rd.Requests {
			log = append(log, fmt.Sprintf("request %d attempt %d: %d slots", r.Region, r.Attempt, len(r.Slots)))
		}
		for _, c := range rd.Cancel {
			log = append(log, fmt.Sprintf("cancel %d", c.Task))
		}
		for _, d := range rd.Deploy {
			log = append(log, fmt.Sprintf("deploy %+v", d))
		}
		running = append(running, rd.Deploy...)
		if len(running) == 0 {
			break
		}
		d := running[0]
		running = running[1:]
		now = now.Add(time.Millisecond)
		if d.Task == fail && !failed {
			failed = true
			_ = s.TaskFailed(now, d.Task, d.Attempt)
			continue
		}
		_ = s.TaskFinished(now, d.Task, d.Attempt) // a canceled attempt's report is refused
	}
	return append(log, fmt.Sprintf("end %v %v", s.State(), s.Err()))
}

// chains is `length` vertices of parallelism p connected by forward edges.
func chains(t *testing.T, length, p int) *topology.JobGraph {
	t.Helper()
	b := topology.NewBuilder(fmt.Sprintf("chains-%dx%d", length, p))
	for i := range length {
		b.AddVertex(topology.JobVertex{ID: fmt.Sprintf("v%d", i), Parallelism: p})
		if i > 0 {
			b.Connect(fmt.Sprintf("v%d", i-1), fmt.Sprintf("v%d", i), exchange.Forward)
		}
	}
	job, err := b.Build()
	require.NoError(t, err)
	return job
}

// A scheduler made over the tables of one that ran another job (the
// simulator's run after run, through internal/schedreuse) runs its job
// exactly as a new one: job after job, larger and smaller, of one-member
// and several-member regions, blocking, pipelined and hybrid, with a
// failover.
func TestSchedulerOverOldTablesRunsAsNew(t *testing.T) {
	jobs := []struct {
		rs    *region.Regions
		slots int
		fail  TaskID
	}{
		{region.FromJob(chains(t, 4, 30), exchange.AllBlocking), 7, 5},
		{region.FromJob(testjobs.FLIP119(t), exchange.PointwisePipelinedOnly), 2, 3},
		{region.FromJob(testjobs.Load(t, "tpcds-q3.json"), exchange.AllHybridFull), 8, 20},
		{region.FromJob(testjobs.Load(t, "tpcds-q3.json"), exchange.AllBlocking), 5, -1},
		{region.FromJob(chains(t, 2, 5), exchange.AllPipelined), 10, -1},
		{region.FromJob(chains(t, 4, 30), exchange.AllBlocking), 7, 5},
	}
	var old *Scheduler
	for i, j := range jobs {
		fresh, err := New(j.rs, Config{})
		require.NoError(t, err)
		want := runToEnd(t, fresh, j.slots, j.fail)
		require.Equal(t, fmt.Sprintf("end %v <nil>", JobFinished), want[len(want)-1], "job %d", i)
		if j.fail >= 0 {
			require.Contains(t, strings.Join(want, "\n"), " attempt 1: ", "job %d restarts a region", i)
		}
		reused, err := newScheduler(old, j.rs, Config{})
		require.NoError(t, err)
		require.Equal(t, want, runToEnd(t, reused, j.slots, j.fail), "job %d", i)
		old = reused
	}
}
