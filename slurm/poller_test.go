package slurm

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/slotpool"
)

// stepClock is a mock clock that reports the duration of every timer set
// on it, so that a test fires them one by one: the goroutine that sets
// them runs in lockstep with the test.
type stepClock struct {
	*clock.Mock
	timers chan time.Duration
}

func newStepClock() *stepClock {
	return &stepClock{Mock: clock.NewMock(), timers: make(chan time.Duration, 1000)}
}

// Timer sets a timer on the mock clock and reports it.
func (c *stepClock) Timer(d time.Duration) *clock.Timer {
	tm := c.Mock.Timer(d)
	c.timers <- d
	return tm
}

// next waits for the next timer set and returns its duration; it fails
// the test if none is set within 10 s of real time.
func (c *stepClock) next(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.timers:
		return d
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no timer was set")
		return 0
	}
}

// lockedInputs runs a slurmCluster's inputs at once, under a lock, at the
// clock's time: what a multijob.Driver does on its goroutine.
type lockedInputs struct {
	mu  sync.Mutex
	clk clock.Clock
}

func (in *lockedInputs) ClusterInput(_ context.Context, fn func(now time.Time) error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return fn(in.clk.Now())
}

// do runs fn as an input.
func (in *lockedInputs) do(fn func(now time.Time)) {
	_ = in.ClusterInput(context.Background(), func(now time.Time) error { fn(now); return nil })
}

// queryCall is one Query a pollSlurm answered (or failed).
type queryCall struct {
	at     time.Time
	names  []string
	failed bool
}

// pollSlurm is a Client over an in-memory cluster that records every
// call: jobs are PENDING until the test starts them; down makes every
// call fail as with slurmctld stopped. It is called from the poller's
// goroutine; the test reads it under its lock.
type pollSlurm struct {
	mu      sync.Mutex
	clk     clock.Clock
	part    partition
	jobs    []jobStatus
	next    JobID
	down    bool
	submits int
	queries []queryCall
	reads   []time.Time // partition reads
	// cancels are the jobs cancelled; tries counts the cancels asked of
	// each job; cancelErrs are the errors of a job's next cancels.
	cancels    []JobID
	tries      map[JobID]int
	cancelErrs map[JobID][]error
}

func newPollSlurm(clk clock.Clock, part partition) *pollSlurm {
	return &pollSlurm{clk: clk, part: part, tries: map[JobID]int{}, cancelErrs: map[JobID][]error{}}
}

func (f *pollSlurm) submit(_ context.Context, name string, _ jobRequest) (JobID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return 0, errDown
	}
	f.submits++
	f.next++
	f.jobs = append(f.jobs, jobStatus{ID: f.next, Name: name, State: "PENDING", Reason: "Resources", Priority: 1})
	return f.next, nil
}

func (f *pollSlurm) Cancel(_ context.Context, _ string, job JobID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries[job]++
	if errs := f.cancelErrs[job]; len(errs) > 0 {
		f.cancelErrs[job] = errs[1:]
		return errs[0]
	}
	if f.down {
		return errDown
	}
	f.cancels = append(f.cancels, job)
	for i := range f.jobs {
		if f.jobs[i].ID == job {
			f.jobs[i].State = "CANCELLED"
		}
	}
	return nil
}

func (f *pollSlurm) query(_ context.Context, names []string) ([]jobStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, queryCall{at: f.clk.Now(), names: slices.Clone(names), failed: f.down})
	if f.down {
		return nil, errDown
	}
	var out []jobStatus
	for _, j := range f.jobs {
		if slices.Contains(names, j.Name) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (f *pollSlurm) partition(context.Context, string) (partition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return partition{}, errDown
	}
	f.reads = append(f.reads, f.clk.Now())
	return f.part, nil
}

func (f *pollSlurm) setPriority(context.Context, string, JobID, int64) error { return nil }

func (f *pollSlurm) runStep(context.Context, Placement, []string, io.Writer, io.Writer) error {
	return nil
}

// set changes the fake under its lock.
func (f *pollSlurm) set(fn func(f *pollSlurm)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// get reads the fake under its lock.
func get[T any](f *pollSlurm, fn func(f *pollSlurm) T) T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(f)
}

// start sets job running on node n1 with cpus CPUs.
func (f *pollSlurm) start(job JobID, cpus int) {
	f.set(func(f *pollSlurm) {
		for i := range f.jobs {
			if f.jobs[i].ID == job {
				f.jobs[i].State, f.jobs[i].Nodes = "RUNNING", []nodeCPUs{{"n1", cpus}}
			}
		}
	})
}

// pollerRig is a poller over a slurmCluster whose jobs each asked for one
// allocation, on a pollSlurm, its loop in lockstep with the test.
type pollerRig struct {
	t     *testing.T
	clk   *stepClock
	in    *lockedInputs
	f     *pollSlurm
	cl    *slurmCluster
	pl    *poller
	ports map[string]admission.JobPort
	// pending is the timer the loop waits for.
	pending time.Duration

	mu      sync.Mutex
	notices []Notice
}

// pollJob is a job of a pollerRig and the slots of its ask.
type pollJob struct {
	name  string
	slots int
}

// newPollerRig submits the jobs on the recorded partition "low", each
// asking for its slots, starts the poller with cfg and waits for its
// first poll: the sbatches, then one query.
func newPollerRig(t *testing.T, cfg pollerConfig, jobs ...pollJob) *pollerRig {
	t.Helper()
	clk := newStepClock()
	r := &pollerRig{t: t, clk: clk, in: &lockedInputs{clk: clk}, f: newPollSlurm(clk, recordedPartition(t, "low")),
		ports: map[string]admission.JobPort{}}
	cl, err := newCluster(clusterConfig{Run: "r1"}, []partition{r.f.part})
	require.NoError(t, err)
	r.cl = cl
	r.in.do(func(now time.Time) {
		for _, j := range jobs {
			port, err := cl.Submit(now, admission.JobSpec{Name: j.name})
			require.NoError(t, err)
			port.Ready() // the capacity
			require.NoError(t, port.Handle(now, unknownAsk(1, j.slots)))
			r.ports[j.name] = port
		}
	})
	cfg.Cluster, cfg.Inputs, cfg.Client, cfg.Clock = cl, r.in, r.f, clk
	cfg.Notify = func(n Notice) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.notices = append(r.notices, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.pl, err = startPoller(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		<-r.pl.Done()
	})
	r.pending = clk.next(t)
	return r
}

// poll fires the timer the loop waits for, waits until the loop is done
// with that poll, and returns the time of the poll.
func (r *pollerRig) poll() time.Time {
	r.t.Helper()
	r.clk.Add(r.pending)
	at := r.clk.Now()
	r.pending = r.clk.next(r.t)
	return at
}

// nextPollAt is when the loop polls next.
func (r *pollerRig) nextPollAt() time.Time { return r.clk.Now().Add(r.pending) }

// noticesOf returns the notices of the kinds given.
func (r *pollerRig) noticesOf(kinds ...NoticeKind) []Notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Notice
	for _, n := range r.notices {
		if slices.Contains(kinds, n.Kind) {
			out = append(out, n)
		}
	}
	return out
}

// state returns a job's state, read as an input.
func (r *pollerRig) state(job string) (st admission.JobState, err error) {
	r.in.do(func(time.Time) { st, err = r.ports[job].State(), r.ports[job].Err() })
	return st, err
}

// epoch is the mock clock's start.
var epoch = time.Unix(0, 0)

// Every poll queries all the jobs' allocations at once: one Query, of
// the names slurmCluster.Watched returns, however many jobs wait.
func TestPollerOneQueryPerPoll(t *testing.T) {
	for _, n := range []int{1, 8} {
		t.Run(fmt.Sprintf("%d jobs", n), func(t *testing.T) {
			var jobs []pollJob
			for i := range n {
				jobs = append(jobs, pollJob{name: fmt.Sprintf("job%d", i), slots: 1})
			}
			r := newPollerRig(t, pollerConfig{}, jobs...)
			var watched []string
			r.in.do(func(time.Time) { watched = r.cl.Watched() })
			require.Len(t, watched, n)
			assert.Equal(t, n, get(r.f, func(f *pollSlurm) int { return f.submits }), "every ask submitted")
			assert.Equal(t, 1, r.pl.Queries())
			for i := 2; i <= 6; i++ {
				r.poll()
				assert.Equal(t, i, r.pl.Queries(), "poll %d", i)
				queries := get(r.f, func(f *pollSlurm) []queryCall { return slices.Clone(f.queries) })
				require.Len(t, queries, i, "poll %d", i)
				assert.Equal(t, watched, queries[i-1].names, "every job's names in one query")
			}
			var waits []jobWait
			r.in.do(func(time.Time) { waits = r.cl.Waiting() })
			assert.Len(t, waits, n, "every job waits")
		})
	}
}

// An unreachable slurmctld is one outage: one notice when it begins, one
// when it ends with its length and the attempts that failed meanwhile;
// the attempts back off from PollMin to RetryMax.
func TestPollerOutageNoticedOnce(t *testing.T) {
	r := newPollerRig(t, pollerConfig{PollMin: 100 * time.Millisecond, RetryMax: time.Second, PartitionEvery: time.Hour, WaitNotice: time.Hour},
		pollJob{"a", 1}, pollJob{"b", 2})
	r.poll()
	r.poll()
	r.f.set(func(f *pollSlurm) { f.down = true })
	began := r.poll()
	for r.nextPollAt().Before(began.Add(5 * time.Second)) {
		r.poll()
	}
	r.f.set(func(f *pollSlurm) { f.down = false })
	ended := r.poll()

	failedQueries := 0
	for _, q := range get(r.f, func(f *pollSlurm) []queryCall { return f.queries }) {
		if q.failed {
			failedQueries++
		}
	}
	// Retries 100 ms, 200, 400, 800, then 1 s apart: 8 failed attempts,
	// the first at began, the next success 5.5 s later.
	assert.Equal(t, 8, failedQueries)
	assert.Equal(t, 5500*time.Millisecond, ended.Sub(began))
	notices := r.noticesOf(OutageBegan, OutageEnded, Waiting)
	require.Len(t, notices, 2)
	assert.Equal(t, OutageBegan, notices[0].Kind)
	assert.Equal(t, began, notices[0].At)
	assert.Equal(t, "query", notices[0].Op)
	assert.ErrorIs(t, notices[0].Err, ErrUnreachable)
	assert.Equal(t, Notice{Kind: OutageEnded, At: ended, Duration: ended.Sub(began), Failures: failedQueries}, notices[1])
	assert.Equal(t, []outageSpan{{Start: began, End: ended, Failures: failedQueries}}, r.pl.Outages())
	assert.Equal(t, 100*time.Millisecond, r.pending, "polling at PollMin again")
}

// An allocation pending for WaitNotice is noticed once with Slurm's
// reason, and again only when the reason changes.
func TestPollerWaitingNotice(t *testing.T) {
	r := newPollerRig(t, pollerConfig{PollMax: time.Second, WaitNotice: 5 * time.Second, PartitionEvery: time.Hour},
		pollJob{"etl", 2}, pollJob{"quick", 1})
	// etl's job is 1, quick's 2; quick runs before it waited long.
	var firstLate time.Time
	for r.clk.Now().Before(epoch.Add(8 * time.Second)) {
		at := r.poll()
		if at.Sub(epoch) >= 2*time.Second {
			r.f.start(2, 1)
		}
		if firstLate.IsZero() && at.Sub(epoch) >= 5*time.Second {
			firstLate = at
		}
	}
	wait := Wait{Ask: 1, Name: "rs-etl-r1-j0-a1", Job: 1, Since: epoch, Reason: "Resources"}
	assert.Equal(t, []Notice{{Kind: Waiting, At: firstLate, Job: "etl", Wait: wait, Duration: firstLate.Sub(epoch)}}, r.noticesOf(Waiting),
		"once, at the first poll after WaitNotice")

	r.f.set(func(f *pollSlurm) { f.jobs[0].Reason = "Priority" })
	changed := r.poll()
	for range 3 {
		r.poll()
	}
	notices := r.noticesOf(Waiting)
	require.Len(t, notices, 2, "again for the new reason only")
	wait.Reason = "Priority"
	assert.Equal(t, Notice{Kind: Waiting, At: changed, Job: "etl", Wait: wait, Duration: changed.Sub(epoch)}, notices[1])
}

// Stop cancels every allocation still held or pending, retrying a
// cancel while slurmctld is unreachable, and returns the last error of a
// cancel Slurm refused.
func TestPollerStopCancelsEverything(t *testing.T) {
	t.Run("retried while unreachable", func(t *testing.T) {
		r := newPollerRig(t, pollerConfig{PollMin: 100 * time.Millisecond, RetryMax: time.Second, PartitionEvery: time.Hour},
			pollJob{"run", 2}, pollJob{"wait", 1}, pollJob{"third", 1})
		r.f.start(1, 2)
		r.poll()
		var g slotpool.Grant
		r.in.do(func(time.Time) { g = r.ports["run"].Ready()[0].(slotpool.Grant) })
		p, ok := r.pl.Placement(context.Background(), "run", g.Slots[0].ID)
		require.True(t, ok)
		assert.Equal(t, JobID(1), p.Job)
		r.f.set(func(f *pollSlurm) { f.cancelErrs[2] = []error{errDown, errDown} })

		stopped := make(chan error, 1)
		go func() { stopped <- r.pl.Stop(context.Background()) }()
		assert.Equal(t, 100*time.Millisecond, r.clk.next(t), "the first retry")
		r.clk.Add(100 * time.Millisecond)
		assert.Equal(t, 200*time.Millisecond, r.clk.next(t), "then backing off")
		r.clk.Add(200 * time.Millisecond)
		require.NoError(t, <-stopped)

		assert.Equal(t, []JobID{1, 2, 3}, get(r.f, func(f *pollSlurm) []JobID { return f.cancels }), "each cancelled once")
		assert.Equal(t, 3, get(r.f, func(f *pollSlurm) int { return f.tries[2] }))
		notices := r.noticesOf(OutageBegan, OutageEnded)
		require.Len(t, notices, 2)
		assert.Equal(t, "cancel", notices[0].Op)
		assert.Equal(t, OutageEnded, notices[1].Kind)
		assert.Equal(t, 2, notices[1].Failures)
		assert.Equal(t, 300*time.Millisecond, notices[1].Duration)
	})

	t.Run("a refused cancel is reported", func(t *testing.T) {
		r := newPollerRig(t, pollerConfig{PartitionEvery: time.Hour}, pollJob{"a", 1}, pollJob{"b", 1}, pollJob{"c", 1})
		refused := &CommandError{Command: "scancel", Stderr: "scancel: error: Kill job error on job id 2: Access/permission denied", Err: ErrPermissionDenied}
		r.f.set(func(f *pollSlurm) { f.cancelErrs[2] = []error{refused} })
		err := r.pl.Stop(context.Background())
		assert.ErrorIs(t, err, ErrPermissionDenied, "though the cancel after it succeeded")
		assert.Equal(t, []JobID{1, 3}, get(r.f, func(f *pollSlurm) []JobID { return f.cancels }))
		assert.NoError(t, r.pl.Stop(context.Background()), "safe to call again")
	})
}

// The partitions are read again every PartitionEvery, and what they say
// reaches the Cluster: a job that no longer fits fails, and its
// allocation is cancelled.
func TestPollerRereadsPartitions(t *testing.T) {
	r := newPollerRig(t, pollerConfig{PollMax: 2 * time.Second, PartitionEvery: 10 * time.Second, WaitNotice: time.Hour},
		pollJob{"big", 16}, pollJob{"small", 2})
	for r.clk.Now().Before(epoch.Add(35 * time.Second)) {
		r.poll()
	}
	reads := get(r.f, func(f *pollSlurm) []time.Time { return slices.Clone(f.reads) })
	require.Len(t, reads, 3)
	last := epoch
	for _, at := range reads {
		assert.GreaterOrEqual(t, at.Sub(last), 10*time.Second)
		assert.Less(t, at.Sub(last), 12*time.Second, "at the first poll due")
		last = at
	}
	st, _ := r.state("big")
	assert.Equal(t, admission.JobAccepted, st)

	r.f.set(func(f *pollSlurm) { f.part = drained(t) })
	for len(get(r.f, func(f *pollSlurm) []time.Time { return f.reads })) == 3 {
		r.poll()
	}
	st, err := r.state("big")
	assert.Equal(t, admission.JobFailed, st)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, []string{"n4 (drained)"}, tl.Unavailable)
	st, _ = r.state("small")
	assert.Equal(t, admission.JobAccepted, st, "it still fits")
	assert.Equal(t, []JobID{1}, get(r.f, func(f *pollSlurm) []JobID { return f.cancels }), "big's allocation cancelled")
}

// A poller whose clusterInputs is a multijob.Driver: the Driver applies the
// slurmCluster's inputs on its loop, and what Slurm granted reaches the
// runtime in the Driver's Ready.
func TestPollerFeedsAMultijobDriver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := newStepClock()
	f := newPollSlurm(clk, recordedPartition(t, "low"))
	cl, err := newCluster(clusterConfig{Run: "r1"}, []partition{f.part})
	require.NoError(t, err)
	s, err := multijob.New(multijob.Config{Cluster: cl})
	require.NoError(t, err)
	d := multijob.StartDriver(ctx, s, multijob.DriverConfig{Clock: clk})
	defer d.Stop()
	readys := make(chan multijob.Ready, 100)
	go func() {
		for rd := range d.Ready() {
			readys <- rd
		}
	}()
	require.NoError(t, d.Submit(ctx, multijob.JobSpec{JobSpec: admission.JobSpec{Name: "etl"}, Regions: pipelinedJob(t, 2)}))

	pl, err := startPoller(ctx, pollerConfig{Cluster: cl, Inputs: d, Client: f, Clock: clk, PartitionEvery: time.Hour})
	require.NoError(t, err)
	pending := clk.next(t)
	assert.Equal(t, []string{"rs-etl-r1-j0-a1"}, get(f, func(f *pollSlurm) []string { return f.queries[0].names }))
	f.start(1, 2)
	clk.Add(pending)
	clk.next(t)

	var deployed []slotpool.SlotID
	for len(deployed) == 0 {
		select {
		case rd := <-readys:
			for _, jr := range rd.Jobs {
				for _, dep := range jr.Deploy {
					assert.Equal(t, "etl", jr.Job)
					deployed = append(deployed, dep.Slot)
				}
			}
		case <-time.After(10 * time.Second):
			require.FailNow(t, "nothing deployed")
		}
	}
	p, ok := pl.Placement(ctx, "etl", deployed[0])
	require.True(t, ok)
	assert.Equal(t, Placement{Job: 1, HetGroup: -1, Node: "n1", CPUs: 1}, p)

	require.NoError(t, pl.Stop(ctx))
	assert.Equal(t, []JobID{1}, get(f, func(f *pollSlurm) []JobID { return f.cancels }))
}
