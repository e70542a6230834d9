package multijob

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// guard bounds how long a driver test waits for the loop before it fails
// instead of hanging. It is a safety net, never a pause: every wait ends
// on a channel as soon as the loop answers.
const guard = 30 * time.Second

// nextReady receives the next Ready of d, failing the test if the channel
// is closed or nothing comes within guard.
func nextReady(t *testing.T, d *Driver) Ready {
	t.Helper()
	select {
	case rd, ok := <-d.Ready():
		require.True(t, ok, "the Ready channel is closed")
		return rd
	case <-time.After(guard):
		require.FailNow(t, "no Ready from the driver")
		return Ready{}
	}
}

// requireStopped checks that the loop of d has ended: every input returns
// ErrStopped, the Ready channel is closed, Stop returns at once.
func requireStopped(t *testing.T, d *Driver) {
	t.Helper()
	select {
	case <-d.Done():
	case <-time.After(guard):
		require.FailNow(t, "the driver's loop did not end")
	}
	ctx := context.Background()
	inputs := map[string]func() error{
		"Submit":       func() error { return d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "x"}}) },
		"StartJob":     func() error { return d.StartJob(ctx, "x") },
		"TaskRunning":  func() error { return d.TaskRunning(ctx, "x", 0, 0) },
		"TaskFinished": func() error { return d.TaskFinished(ctx, "x", 0, 0) },
		"TaskFailed":   func() error { return d.TaskFailed(ctx, "x", 0, 0) },
		"SlotLost":     func() error { return d.SlotLost(ctx, "x", 1) },
		"SetPriority":  func() error { return d.SetPriority(ctx, root, "x", 1) },
		"Kill":         func() error { return d.Kill(ctx, root, "x") },
		"Status": func() error {
			_, err := d.Status(ctx, "x")
			return err
		},
	}
	for name, in := range inputs {
		assert.ErrorIs(t, in(), ErrStopped, name)
	}
	select {
	case _, ok := <-d.Ready():
		assert.False(t, ok, "the Ready channel is closed")
	case <-time.After(guard):
		assert.Fail(t, "the Ready channel is not closed")
	}
	d.Stop() // again: returns at once
}

// gateClock is a mock clock whose Now blocks while the gate is armed, so
// a test can hold the driver's loop inside an input it took.
type gateClock struct {
	*clock.Mock
	armed   atomic.Bool
	entered chan struct{} // Now signals here when it blocks
	gate    chan struct{} // and waits here
}

// Now blocks while the gate is armed, then returns the mock's time.
func (c *gateClock) Now() time.Time {
	if c.armed.Load() {
		c.entered <- struct{}{}
		<-c.gate
	}
	return c.Mock.Now()
}

// TestDriverTurn: inputs queued while the loop is busy are one instant:
// a low-priority job and a high-priority one, submitted by two goroutines
// while the loop is held inside a third input, are decided together, and
// the high one gets the slots whichever came first.
func TestDriverTurn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Admission: admission.Config{Slots: cluster(4), DefaultPolicy: admission.Priority}})
	require.NoError(t, err)
	clk := &gateClock{Mock: clock.NewMock(), entered: make(chan struct{}), gate: make(chan struct{})}
	queued := make(chan struct{}, 8)
	ctx := context.Background()
	d := startDriver(ctx, s, DriverConfig{Clock: clk}, func() { queued <- struct{}{} })
	defer d.Stop()

	clk.armed.Store(true)
	held := make(chan error, 1)
	first := JobSpec{JobSpec: admission.JobSpec{Name: "first", Priority: 1}, Regions: blockingJob(t, 1)}
	go func() { held <- d.Submit(ctx, first) }()
	<-queued
	<-clk.entered // the loop is inside the first Submit
	var wg sync.WaitGroup
	for _, spec := range []JobSpec{
		{JobSpec: admission.JobSpec{Name: "low", Priority: 1000}, Regions: pipelinedJob(t, 4)},
		{JobSpec: admission.JobSpec{Name: "high", Priority: 9000}, Regions: pipelinedJob(t, 4)},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, d.Submit(ctx, spec))
		}()
	}
	<-queued
	<-queued // both are queued
	clk.armed.Store(false)
	clk.gate <- struct{}{}
	require.NoError(t, <-held)
	wg.Wait()

	rd := nextReady(t, d)
	assert.Equal(t, map[string]int{"high": 8}, deploys(rd), "one decision over the three jobs")
	st, err := d.Status(ctx, "low")
	require.NoError(t, err)
	assert.Equal(t, admission.JobAccepted, st.Admission)
	d.Stop()
	requireStopped(t, d)
}

// TestDriverStartJob: the Ready with the driver's grant comes first; the
// runtime deploys the driver and, once it is up, starts the job through
// the driver; its tasks run on a worker goroutine until the job ends.
func TestDriverStartJob(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := fairShare(t, 3)
	mock := clock.NewMock()
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: mock})
	defer d.Stop()
	driver := resource.Unknown
	require.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "spark", Driver: &driver}, Regions: blockingJob(t, 2)}))
	rd := nextReady(t, d)
	require.Contains(t, events(rd), "spark: driver in slot 0")
	assert.Empty(t, rd.Jobs)

	mock.Add(time.Second) // the driver's startup
	require.NoError(t, d.StartJob(ctx, "spark"))
	work := make(chan scheduler.Deployment, 8)
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		for dep := range work {
			assert.NoError(t, d.TaskRunning(ctx, "spark", dep.Task, dep.Attempt))
			assert.NoError(t, d.TaskFinished(ctx, "spark", dep.Task, dep.Attempt))
		}
	}()
	deployed := 0
	var end JobEnd
	for end.Job == "" {
		rd := nextReady(t, d)
		for _, jr := range rd.Jobs {
			require.Equal(t, "spark", jr.Job)
			for _, dep := range jr.Deploy {
				assert.NotEqual(t, scheduler.SlotID(0), dep.Slot, "the driver's slot")
				deployed++
				work <- dep
			}
		}
		for _, e := range rd.Ended {
			end = e
		}
	}
	close(work)
	<-workerDone
	assert.Equal(t, 3, deployed)
	assert.Equal(t, Finished, end.Outcome)
	assert.Equal(t, mock.Now(), end.At)
	st, err := d.Status(ctx, "spark")
	require.NoError(t, err)
	assert.Equal(t, admission.JobCompleted, st.Admission)
	assert.False(t, st.HasDriverSlot)
	require.NoError(t, d.Forget(ctx, "spark"), "its end was handed out")
	_, err = d.Status(ctx, "spark")
	assert.ErrorIs(t, err, ErrUnknownJob)
	d.Stop()
	requireStopped(t, d)
}

// TestDriverTimer: the driver arms its timer for the next deadline (a
// hard gang's); moving the mock clock there fires it, and the job is
// reported failed. A second earlier nothing happened.
func TestDriverTimer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := fairShare(t, 2)
	mock := clock.NewMock()
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: mock})
	defer d.Stop()
	require.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "first"}, Regions: pipelinedJob(t, 2)}))
	require.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "gang", Gang: &admission.Gang{MinSlots: 2, Hard: true, Timeout: time.Minute}}, Regions: pipelinedJob(t, 2)}))
	// The two submissions may be one turn or two.
	var rd Ready
	got := map[string]int{}
	for rd.Deadline.IsZero() {
		rd = nextReady(t, d)
		for job, n := range deploys(rd) {
			got[job] += n
		}
	}
	require.Equal(t, map[string]int{"first": 4}, got)
	require.Equal(t, mock.Now().Add(time.Minute), rd.Deadline)

	mock.Add(59 * time.Second)
	st, err := d.Status(ctx, "gang")
	require.NoError(t, err)
	require.Nil(t, st.End)
	mock.Add(time.Second) // the timer fires; its callback posts a tick
	rd = nextReady(t, d)
	require.Len(t, rd.Ended, 1)
	assert.Equal(t, "gang", rd.Ended[0].Job)
	assert.ErrorIs(t, rd.Ended[0].Err, admission.ErrGangTimeout)
	d.Stop()
	requireStopped(t, d)
}

// TestDriverConcurrentJobs: 8 goroutines each submit a job and run its
// tasks as they are deployed, all at once and under -race, on a fairshare
// queue of 4 slots. The reader checks what a runtime sees: no slot gets a
// task while another job's task is in it (cancels and releases come
// first), every task is deployed once, every job finishes.
func TestDriverConcurrentJobs(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const jobs = 8
	s := fairShare(t, 4)
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()
	work := map[string]chan scheduler.Deployment{}
	for i := range jobs {
		work[fmt.Sprintf("job%d", i)] = make(chan scheduler.Deployment, 16)
	}
	rs := blockingJob(t, 3) // immutable: the jobs share it
	var wg sync.WaitGroup
	for name, c := range work {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: name}, Regions: rs}))
			for dep := range c {
				assert.NoError(t, d.TaskFinished(ctx, name, dep.Task, dep.Attempt))
			}
		}()
	}
	type use struct {
		job  string
		task scheduler.TaskID
	}
	occupied := map[scheduler.SlotID]use{}
	deployed := map[use]int{}
	ended := map[string]Outcome{}
	for len(ended) < jobs {
		rd := nextReady(t, d)
		for _, jr := range rd.Jobs {
			require.Empty(t, jr.Cancel)
			for _, rl := range jr.Released {
				u, ok := occupied[rl.Slot]
				assert.True(t, ok && u.job == jr.Job, "%s released slot %d, not its own", jr.Job, rl.Slot)
				delete(occupied, rl.Slot)
			}
		}
		for _, jr := range rd.Jobs {
			for _, dep := range jr.Deploy {
				if u, ok := occupied[dep.Slot]; ok {
					t.Errorf("%s deployed into slot %d, where %s runs", jr.Job, dep.Slot, u.job)
				}
				u := use{job: jr.Job, task: dep.Task}
				occupied[dep.Slot] = u
				deployed[u]++
				work[jr.Job] <- dep
			}
		}
		for _, e := range rd.Ended {
			ended[e.Job] = e.Outcome
		}
	}
	for _, c := range work {
		close(c)
	}
	wg.Wait()
	assert.Len(t, deployed, jobs*4)
	for u, n := range deployed {
		assert.Equal(t, 1, n, "%v deployed %d times", u, n)
	}
	for name, o := range ended {
		assert.Equal(t, Finished, o, name)
	}
	assert.Empty(t, occupied)
	d.Stop()
	requireStopped(t, d)
}

// TestDriverReadyIntactAfterLaterTurns: a Ready received from a Driver
// is the receiver's: the loop's later turns, which call the Scheduler's
// Ready again (and through it every job's scheduler's), leave every
// Ready received before as it was.
func TestDriverReadyIntactAfterLaterTurns(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const jobs = 3
	s := fairShare(t, 2)
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()
	rs := blockingJob(t, 3)
	for i := range jobs {
		require.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: fmt.Sprintf("job%d", i)}, Regions: rs}))
	}
	var got []Ready
	var want []string
	ended := 0
	for ended < jobs {
		require.Less(t, len(got), 1000, "no end in sight")
		rd := nextReady(t, d)
		got, want = append(got, rd), append(want, fmt.Sprintf("%+v", rd))
		for _, jr := range rd.Jobs {
			for _, dep := range jr.Deploy {
				require.NoError(t, d.TaskFinished(ctx, jr.Job, dep.Task, dep.Attempt))
			}
		}
		ended += len(rd.Ended)
	}
	require.Greater(t, len(got), 2)
	for i, rd := range got {
		assert.Equal(t, want[i], fmt.Sprintf("%+v", rd), "the Ready received in turn %d changed", i)
	}
	d.Stop()
	requireStopped(t, d)
}

// TestDriverStop: Stop in the middle of a run, with inputs in flight from
// other goroutines and a timer armed: every input afterwards returns
// ErrStopped, the Ready channel is closed, and no goroutine is left.
func TestDriverStop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Admission: admission.Config{Slots: cluster(1)}, Jobs: scheduler.Config{Pool: slotpool.Config{Timeout: time.Minute}}})
	require.NoError(t, err)
	mock := clock.NewMock()
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: mock})
	defer d.Stop()
	require.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: pipelinedJob(t, 1)}))
	require.NoError(t, d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "b"}, Regions: pipelinedJob(t, 1)}))
	var rd Ready
	for rd.Deadline.IsZero() {
		rd = nextReady(t, d)
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if err := d.SetPriority(ctx, root, "b", 10); err != nil {
					assert.ErrorIs(t, err, ErrStopped)
					return
				}
			}
		}()
	}
	d.Stop()
	wg.Wait()
	requireStopped(t, d)
	mock.Add(time.Hour) // the stopped timer does not fire
}

// TestDriverContextDone: an input whose context is done before the loop
// took it returns ctx.Err() and is not applied; canceling StartDriver's
// context ends the loop like Stop.
func TestDriverContextDone(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := fairShare(t, 2)
	clk := &gateClock{Mock: clock.NewMock(), entered: make(chan struct{}), gate: make(chan struct{})}
	loopCtx, stopLoop := context.WithCancel(context.Background())
	defer stopLoop()
	ctx := context.Background()
	queued := make(chan struct{}, 8)
	d := startDriver(loopCtx, s, DriverConfig{Clock: clk}, func() { queued <- struct{}{} })
	defer d.Stop()

	clk.armed.Store(true)
	held := make(chan error, 1)
	a := JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: pipelinedJob(t, 2)}
	go func() { held <- d.Submit(ctx, a) }()
	<-queued
	<-clk.entered // the loop is inside the Submit

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, d.Submit(canceled, JobSpec{JobSpec: admission.JobSpec{Name: "b"}, Regions: pipelinedJob(t, 1)}), context.Canceled)
	late, cancelLate := context.WithCancel(ctx)
	lateErr := make(chan error, 1)
	c := JobSpec{JobSpec: admission.JobSpec{Name: "c"}, Regions: pipelinedJob(t, 1)}
	go func() { lateErr <- d.Submit(late, c) }()
	<-queued // c waits in the queue
	cancelLate()
	assert.ErrorIs(t, <-lateErr, context.Canceled)

	clk.armed.Store(false)
	clk.gate <- struct{}{}
	require.NoError(t, <-held)
	rd := nextReady(t, d)
	assert.Equal(t, map[string]int{"a": 4}, deploys(rd))
	for _, name := range []string{"b", "c"} {
		_, err := d.Status(ctx, name)
		assert.ErrorIs(t, err, ErrUnknownJob, "%s was not applied", name)
	}
	stopLoop()
	requireStopped(t, d)
}

// TestDriverFirstTurn: jobs submitted to the Scheduler before the driver
// starts are one instant, decided in the loop's first turn: the
// high-priority job gets the slots although it came second.
func TestDriverFirstTurn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Admission: admission.Config{Slots: cluster(4), DefaultPolicy: admission.Priority}})
	require.NoError(t, err)
	mock := clock.NewMock()
	require.NoError(t, s.Submit(mock.Now(), JobSpec{JobSpec: admission.JobSpec{Name: "low", Priority: 1000}, Regions: pipelinedJob(t, 4)}))
	require.NoError(t, s.Submit(mock.Now(), JobSpec{JobSpec: admission.JobSpec{Name: "high", Priority: 9000}, Regions: pipelinedJob(t, 4)}))
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: mock})
	defer d.Stop()

	rd := nextReady(t, d)
	assert.Equal(t, map[string]int{"high": 8}, deploys(rd), "one decision over both jobs, with no input after the start")
	d.Stop()
	requireStopped(t, d)
}

// TestDriverSubmitsABatchAsOneInstant: two equal jobs submitted in one
// call to a started driver are decided together, so a fair-share queue
// splits the 4 slots 2 + 2, whatever their order; the refused spec of a
// batch stops it with its error.
func TestDriverSubmitsABatchAsOneInstant(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := New(Config{Admission: admission.Config{Slots: cluster(4), DefaultPolicy: admission.FairShare}})
	require.NoError(t, err)
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()
	require.NoError(t, d.Submit(ctx,
		JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: blockingJob(t, 4)},
		JobSpec{JobSpec: admission.JobSpec{Name: "b"}, Regions: blockingJob(t, 4)}))
	rd := nextReady(t, d)
	assert.Equal(t, map[string]int{"a": 2, "b": 2}, deploys(rd), "one instant: the fair share of each")

	err = d.Submit(ctx, JobSpec{JobSpec: admission.JobSpec{Name: "c"}, Regions: blockingJob(t, 1)},
		JobSpec{JobSpec: admission.JobSpec{Name: "a"}, Regions: blockingJob(t, 1)})
	require.Error(t, err, "a is a duplicate name")
	_, err = d.Status(ctx, "c")
	assert.NoError(t, err, "c, before the refused spec, is submitted")
	d.Stop()
	requireStopped(t, d)
}
