package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
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

// readyUntil receives Ready values of d until one satisfies done, and
// returns them all merged in order (a Ready's grouping depends on when the
// loop was asked, its content in order does not).
func readyUntil(t *testing.T, d *Driver, done func(Ready) bool) Ready {
	t.Helper()
	var all Ready
	for {
		rd := nextReady(t, d)
		all.Requests = append(all.Requests, rd.Requests...)
		all.Cancel = append(all.Cancel, rd.Cancel...)
		all.Released = append(all.Released, rd.Released...)
		all.Deploy = append(all.Deploy, rd.Deploy...)
		all.Restarted = append(all.Restarted, rd.Restarted...)
		all.PartitionsReleased = append(all.PartitionsReleased, rd.PartitionsReleased...)
		all.ToAdmission = append(all.ToAdmission, rd.ToAdmission...)
		if rd.Job != nil {
			all.Job = rd.Job
		}
		all.Deadline = rd.Deadline
		if done(rd) {
			return all
		}
	}
}

// waitDone waits for the driver's loop to end, failing the test if it
// does not within guard.
func waitDone(t *testing.T, d *Driver) {
	t.Helper()
	select {
	case <-d.Done():
	case <-time.After(guard):
		require.FailNow(t, "the driver's loop did not end")
	}
}

// requireStopped checks that the loop of d has ended: every input returns
// ErrStopped, the Ready channel is closed, Stop returns at once.
func requireStopped(t *testing.T, d *Driver) {
	t.Helper()
	waitDone(t, d)
	ctx := context.Background()
	inputs := map[string]func() error{
		"Start":       func() error { return d.Start(ctx) },
		"Offer":       func() error { return d.Offer(ctx, slotpool.Slot{ID: 1000}) },
		"SetCapacity": func() error { return d.SetCapacity(ctx, nil) },
		"TaskRunning": func() error { return d.TaskRunning(ctx, 0, 0) },
		"TaskFinish":  func() error { return d.TaskFinished(ctx, 0, 0) },
		"TaskFailed":  func() error { return d.TaskFailed(ctx, 0, 0) },
		"SlotLost":    func() error { return d.SlotLost(ctx, 1) },
		"Admit":       func() error { return d.Admit(ctx, slotpool.Capacity{}) },
		"Status": func() error {
			_, err := d.Status(ctx)
			return err
		},
	}
	for name, in := range inputs {
		assert.ErrorIs(t, in(), ErrStopped, name)
	}
	// The loop sends only while it runs, so the channel has nothing left:
	// a Ready it had taken out but not handed over is dropped.
	select {
	case _, ok := <-d.Ready():
		assert.False(t, ok, "the Ready channel is closed")
	case <-time.After(guard):
		assert.Fail(t, "the Ready channel is not closed")
	}
	d.Stop() // again: returns at once
}

// fanJob: src(n) -hash, blocking-> sink(n); all-blocking, every subtask
// is a region of one slot and every sink waits for every source.
func fanJob(t testing.TB, n int) *region.Regions {
	job := build(t, topology.NewBuilder("fan").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: n}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: n}).
		Connect("src", "sink", exchange.Hash))
	return region.FromJob(job, exchange.AllBlocking)
}

// TestDriverConcurrentInputs: 50 goroutines each offer a slot and own a
// share of the tasks; one reader fans the deployments out to their owners,
// which report them running and finished, all at once and under -race.
// The reader checks what a runtime sees: no slot gets a task before the
// previous one left it, no sink is deployed before every source reported
// finished, every task is deployed once; the job finishes and every slot
// is free at the end.
func TestDriverConcurrentInputs(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const workers, n = 50, 100
	rs := fanJob(t, n)
	topo := rs.Topology()
	mock := clock.NewMock()
	s := mustNew(t, rs, Config{})
	ctx := context.Background()
	d := StartDriver(ctx, s, DriverConfig{Clock: mock})
	defer d.Stop()
	require.NoError(t, d.Start(ctx))

	var srcFinished atomic.Int32 // sources reported finished (counted before the report)
	work := make([]chan Deployment, workers)
	var wg sync.WaitGroup
	for w := range workers {
		work[w] = make(chan Deployment, 2*n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, d.Offer(ctx, Slot{ID: SlotID(w + 1)}))
			for dep := range work[w] {
				assert.NoError(t, d.TaskRunning(ctx, dep.Task, dep.Attempt))
				if topo.JobVertexOf(dep.Task) == 0 {
					srcFinished.Add(1)
				}
				assert.NoError(t, d.TaskFinished(ctx, dep.Task, dep.Attempt))
			}
		}()
	}

	deployed := map[TaskID]int{}
	occupied := map[SlotID]TaskID{}
	var jobs []JobState
	released := 0
	for done := false; !done; {
		rd := nextReady(t, d)
		for _, rl := range rd.Released {
			_, ok := occupied[rl.Slot]
			assert.True(t, ok, "slot %d released, no task in it", rl.Slot)
			delete(occupied, rl.Slot)
			released++
		}
		for _, dep := range rd.Deploy {
			if u, ok := occupied[dep.Slot]; ok {
				t.Errorf("%s deployed into slot %d, where %s runs", topo.VertexName(dep.Task), dep.Slot, topo.VertexName(u))
			}
			occupied[dep.Slot] = dep.Task
			deployed[dep.Task]++
			assert.Zero(t, dep.Attempt)
			if topo.JobVertexOf(dep.Task) == 1 {
				assert.EqualValues(t, n, srcFinished.Load(), "%s deployed before every source finished", topo.VertexName(dep.Task))
			}
			work[int(dep.Task)%workers] <- dep
		}
		assert.Empty(t, rd.Cancel)
		if rd.Job != nil {
			jobs = append(jobs, rd.Job.State)
			done = rd.Job.State != JobRunning
		}
	}
	for _, c := range work {
		close(c)
	}
	wg.Wait()
	st, err := d.Status(ctx)
	require.NoError(t, err)
	d.Stop()
	requireStopped(t, d)

	assert.Equal(t, []JobState{JobRunning, JobFinished}, jobs)
	assert.Len(t, deployed, 2*n)
	for v, k := range deployed {
		assert.Equal(t, 1, k, "%s deployed %d times", topo.VertexName(v), k)
	}
	assert.Equal(t, 2*n, released)
	assert.Empty(t, occupied)
	assert.Equal(t, JobFinished, st.State)
	assert.Equal(t, workers, st.Pool.Free)
	assert.Equal(t, 2*n, st.Stats.RegionsDeployed)
	assert.Equal(t, JobFinished, s.State()) // the loop has ended: s is ours again
}

// TestDriverReadyIntactAfterLaterTurns: a Ready received from a Driver
// is the receiver's: the loop's later turns, which call the scheduler's
// Ready again (and so reuse its lists), leave every Ready received before
// as it was.
func TestDriverReadyIntactAfterLaterTurns(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := fanJob(t, 6)
	ctx := context.Background()
	d := StartDriver(ctx, mustNew(t, rs, Config{}), DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()
	require.NoError(t, d.Offer(ctx, slotpool.Slots(2)...))
	require.NoError(t, d.Start(ctx))
	var got []Ready
	var want []string
	for {
		require.Less(t, len(got), 1000, "no end in sight")
		rd := nextReady(t, d)
		got, want = append(got, rd), append(want, fmt.Sprintf("%+v", rd))
		for _, dep := range rd.Deploy {
			require.NoError(t, d.TaskRunning(ctx, dep.Task, dep.Attempt))
			require.NoError(t, d.TaskFinished(ctx, dep.Task, dep.Attempt))
		}
		if ended, err := rd.Job.Ended(); ended {
			require.NoError(t, err)
			break
		}
	}
	require.Greater(t, len(got), 2)
	for i, rd := range got {
		assert.Equal(t, want[i], fmt.Sprintf("%+v", rd), "the Ready received in turn %d changed", i)
	}
	d.Stop()
	requireStopped(t, d)
}

// TestDriverFulfillabilityTimeout: the 3-slot region of wideJob waits on
// two slots; the driver arms its timer for the pool's deadline, and moving
// the mock clock there fires it: the job fails with the typed error in
// Ready.Job, and the task still running is canceled.
func TestDriverFulfillabilityTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := wideJob(t)
	mock := clock.NewMock()
	start := mock.Now()
	ctx := context.Background()
	d := StartDriver(ctx, mustNew(t, rs, Config{Pool: slotpool.Config{Timeout: time.Minute}}), DriverConfig{Clock: mock})
	defer d.Stop()
	topo := rs.Topology()
	name := func(n string) TaskID {
		v, err := topo.ParseVertexName(n)
		require.NoError(t, err)
		return v
	}
	s0, x0, t0v := name("S#0"), name("X#0"), name("T#0")

	require.NoError(t, d.Offer(ctx, Slot{ID: 1}, Slot{ID: 2}))
	require.NoError(t, d.Start(ctx))
	rd := readyUntil(t, d, func(rd Ready) bool { return rd.Job != nil })
	require.Len(t, rd.Deploy, 2)
	assert.True(t, rd.Deadline.IsZero(), "nothing waits yet")

	mock.Add(10 * time.Second)
	require.NoError(t, d.TaskFinished(ctx, s0, 0))
	rd = readyUntil(t, d, func(rd Ready) bool { return len(rd.Requests) > 0 })
	require.Equal(t, rs.RegionOf(t0v), rd.Requests[0].Region)
	deadline := start.Add(10 * time.Second).Add(time.Minute)
	require.Equal(t, deadline, rd.Deadline)

	// One second early the job still runs.
	mock.Add(59 * time.Second)
	st, err := d.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, JobRunning, st.State)

	mock.Add(time.Second) // the timer fires; its callback posts a tick
	rd = readyUntil(t, d, func(rd Ready) bool { return rd.Job != nil })
	require.Equal(t, JobFailed, rd.Job.State)
	var re *RegionError
	require.ErrorAs(t, rd.Job.Err, &re)
	assert.Equal(t, rs.RegionOf(t0v), re.Region)
	assert.ErrorIs(t, rd.Job.Err, ErrJobFailed)
	var nr *slotpool.NoResourceAvailableError
	require.ErrorAs(t, rd.Job.Err, &nr)
	assert.False(t, nr.Never)
	assert.Equal(t, time.Minute, nr.Timeout)
	assert.Equal(t, []Task{{Task: x0, Attempt: 0}}, rd.Cancel)
	assert.True(t, rd.Deadline.IsZero())

	st, err = d.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, JobFailed, st.State)
	assert.Same(t, rd.Job.Err, st.Err)
	assert.Equal(t, 2, st.Pool.Free)
	d.Stop()
	requireStopped(t, d)
}

// TestDriverStop: Stop in the middle of a run, with inputs in flight from
// other goroutines and a timer armed: every input afterwards returns
// ErrStopped, the Ready channel is closed, and no goroutine is left.
func TestDriverStop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	mock := clock.NewMock()
	ctx := context.Background()
	d := StartDriver(ctx, mustNew(t, rs, Config{Pool: slotpool.Config{Timeout: time.Minute}}), DriverConfig{Clock: mock})
	defer d.Stop()
	require.NoError(t, d.Start(ctx)) // no slots: the source regions wait, a timeout runs
	rd := nextReady(t, d)
	require.NotEmpty(t, rd.Requests)
	require.False(t, rd.Deadline.IsZero(), "a timer is armed")

	// Goroutines keep asking until the loop is gone; each input is either
	// answered or refused with ErrStopped.
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err := d.Status(ctx)
				if err != nil {
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

// TestDriverContextCanceled: canceling StartDriver's context ends the
// loop like Stop.
func TestDriverContextCanceled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := StartDriver(ctx, mustNew(t, rs, Config{}), DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()
	require.NoError(t, d.Offer(context.Background(), Slot{ID: 1}, Slot{ID: 2}))
	require.NoError(t, d.Start(context.Background()))
	rd := nextReady(t, d)
	require.Len(t, rd.Deploy, 2)
	require.NoError(t, d.TaskFinished(context.Background(), rd.Deploy[0].Task, 0)) // leaves a Ready pending
	cancel()
	requireStopped(t, d)
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

// TestDriverInputContextDone: an input whose context is done before the
// loop took it returns ctx.Err() and is not applied. The loop is held
// inside another input (its clock blocks), so it cannot take the input,
// and the outcome does not depend on scheduling.
func TestDriverInputContextDone(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	clk := &gateClock{Mock: clock.NewMock(), entered: make(chan struct{}), gate: make(chan struct{})}
	ctx := context.Background()
	s := mustNew(t, rs, Config{})
	d := StartDriver(ctx, s, DriverConfig{Clock: clk})
	defer d.Stop()
	require.NoError(t, d.Offer(ctx, Slot{ID: 1}, Slot{ID: 2}))
	require.NoError(t, d.Start(ctx))
	rd := nextReady(t, d)
	require.Len(t, rd.Deploy, 2)
	a0 := rd.Deploy[0].Task

	clk.armed.Store(true)
	held := make(chan error, 1)
	go func() {
		_, err := d.Status(ctx)
		held <- err
	}()
	<-clk.entered // the loop is inside the Status input

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, d.TaskFinished(canceled, a0, 0), context.Canceled)
	expired, cancel2 := context.WithDeadline(ctx, time.Unix(0, 0))
	defer cancel2()
	assert.ErrorIs(t, d.TaskFailed(expired, a0, 0), context.DeadlineExceeded)
	assert.ErrorIs(t, d.SlotLost(canceled, 1), context.Canceled)

	clk.armed.Store(false)
	clk.gate <- struct{}{}
	require.NoError(t, <-held)

	st, err := d.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, Stats{RegionsDeployed: 2}, st.Stats, "the refused inputs were not applied")
	assert.Equal(t, 2, st.Pool.InUse)
	d.Stop()
	requireStopped(t, d)
	vs, err := s.Task(a0)
	require.NoError(t, err)
	assert.Equal(t, TaskDeploying, vs.State)
}

// TestDriverCapacityAndErrors: the driver hands back the scheduler's
// errors unchanged: Start's *RegionError when a source region can never
// fit the declared capacity (the Ready says so too), and a refused input's
// *OpError.
func TestDriverCapacityAndErrors(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rs := region.FromJob(flip119(t), exchange.AllPipelined)
	ctx := context.Background()
	d := StartDriver(ctx, mustNew(t, rs, Config{}), DriverConfig{Clock: clock.NewMock()})
	defer d.Stop()
	require.NoError(t, d.SetCapacity(ctx, []resource.Count{{Profile: resource.Unknown, N: 3}}))
	err := d.Offer(ctx, Slot{ID: 1}, Slot{ID: 1})
	assert.ErrorIs(t, err, slotpool.ErrDuplicateSlot)
	var oe *OpError
	assert.True(t, errors.As(err, &oe))
	err = d.Start(ctx)
	var re *RegionError
	require.ErrorAs(t, err, &re)
	rd := nextReady(t, d)
	require.NotNil(t, rd.Job)
	assert.Equal(t, JobFailed, rd.Job.State)
	assert.Same(t, re, rd.Job.Err)
	assert.ErrorIs(t, d.Start(ctx), ErrAlreadyStarted)
	d.Stop()
	requireStopped(t, d)
}
