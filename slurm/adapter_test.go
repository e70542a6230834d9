package slurm

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/regionsched/regionsched/slotpool"
)

// fakeSlurm is a Client over an in-memory cluster the test steers: jobs
// are PENDING until the test starts them; down makes every call fail as
// with slurmctld stopped.
type fakeSlurm struct {
	part       partition
	jobs       []jobStatus
	next       JobID
	down       bool
	lostAnswer bool // the next submit reaches Slurm but its answer is lost
	submits    int
	cancels    []JobID
	prio       map[JobID]int64
	operator   string
}

var errDown = &CommandError{Command: "fake", Stderr: "Unable to contact slurm controller (connect failure)", Err: ErrUnreachable}

func (f *fakeSlurm) submit(_ context.Context, name string, req jobRequest) (JobID, error) {
	if f.down {
		return 0, errDown
	}
	f.submits++
	f.next++
	f.jobs = append(f.jobs, jobStatus{ID: f.next, Name: name, State: "PENDING", Reason: "Resources"})
	if f.lostAnswer {
		f.lostAnswer = false
		return 0, errDown
	}
	return f.next, nil
}

func (f *fakeSlurm) Cancel(_ context.Context, name string, job JobID) error {
	if f.down {
		return errDown
	}
	f.cancels = append(f.cancels, job)
	for i := range f.jobs {
		if f.jobs[i].ID == job || (job == 0 && f.jobs[i].Name == name) {
			f.jobs[i].State = "CANCELLED"
		}
	}
	return nil
}

func (f *fakeSlurm) query(_ context.Context, names []string) ([]jobStatus, error) {
	if f.down {
		return nil, errDown
	}
	return append([]jobStatus(nil), f.jobs...), nil
}

func (f *fakeSlurm) partition(context.Context, string) (partition, error) {
	if f.down {
		return partition{}, errDown
	}
	return f.part, nil
}

// cmdSetPriority applies what Slurm would: the operator's change, and an
// owner's decrease (which scontrol reports as an error); it refuses an
// owner's raise and anybody else's change.
func (f *fakeSlurm) setPriority(_ context.Context, principal string, job JobID, p int64) error {
	for i := range f.jobs {
		if f.jobs[i].ID != job {
			continue
		}
		switch {
		case principal == f.operator:
			f.prio[job], f.jobs[i].Priority = p, p
			return nil
		case principal == f.jobs[i].User && p < f.jobs[i].Priority:
			f.prio[job], f.jobs[i].Priority = p, p
			return &CommandError{Command: "scontrol", Stderr: "Changes to job priority are not persistent, change nice instead", Err: ErrRejected}
		}
	}
	return &CommandError{Command: "scontrol", Stderr: "Access/permission denied", Err: ErrPermissionDenied}
}

func (f *fakeSlurm) runStep(context.Context, Placement, []string, io.Writer, io.Writer) error {
	return nil
}

// start sets the job running on node n1.
func (f *fakeSlurm) start(job JobID, cpus int) {
	for i := range f.jobs {
		if f.jobs[i].ID == job {
			f.jobs[i].State, f.jobs[i].Nodes = "RUNNING", []nodeCPUs{{"n1", cpus}}
		}
	}
}

// sink records what the adapter admits.
type sink struct{ got []slotpool.FromAdmission }

func (s *sink) Admit(_ context.Context, msgs ...slotpool.FromAdmission) error {
	s.got = append(s.got, msgs...)
	return nil
}

func (s *sink) take() []slotpool.FromAdmission {
	g := s.got
	s.got = nil
	return g
}

// newAdapter returns an adapter whose loop is not started: the test calls
// step itself.
func newAdapter(t *testing.T, f *fakeSlurm, onError func(error), log *zap.Logger) (*Adapter, *sink) {
	t.Helper()
	core, err := newJobCore(jobConfig{Name: "rs"}, f.part)
	require.NoError(t, err)
	s := &sink{}
	if log == nil {
		log = zap.NewNop()
	}
	a := &Adapter{cfg: AdapterConfig{client: f, Sink: s, OnError: onError, PollMin: 100 * time.Millisecond, PollMax: 800 * time.Millisecond,
		RetryMax: time.Second, Auditor: nil}, pacer: newPacer(clock.NewMock(), 100*time.Millisecond, 800*time.Millisecond, time.Second),
		log: log, core: core}
	close(a.done) // no loop
	a.deliver(context.Background())
	require.Len(t, s.take(), 1, "capacity")
	return a, s
}

func TestAdapterGrantsAndBacksOff(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low")}
	a, s := newAdapter(t, f, nil, nil)
	require.NoError(t, a.Handle(ctx, unknownAsk(1, 2)))
	assert.Equal(t, 100*time.Millisecond, a.step(ctx), "submitted: poll soon")
	assert.Equal(t, 1, f.submits)
	assert.Empty(t, s.got)
	// Nothing changes: the interval doubles up to PollMax.
	var waits []time.Duration
	for range 5 {
		waits = append(waits, a.step(ctx))
	}
	assert.Equal(t, []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 800 * time.Millisecond, 800 * time.Millisecond}, waits)
	f.start(1, 2)
	assert.Equal(t, 100*time.Millisecond, a.step(ctx))
	got := s.take()
	require.Len(t, got, 1)
	assert.Len(t, got[0].(slotpool.Grant).Slots, 2)
	p, ok := a.Placement(1)
	require.True(t, ok)
	assert.Equal(t, "n1", p.Node)
	assert.Equal(t, "low", a.partition().Name)
}

func TestAdapterOutage(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low")}
	var outages []*OutageError
	core, logs := observer.New(zap.WarnLevel)
	a, s := newAdapter(t, f, func(err error) {
		var oe *OutageError
		if errors.As(err, &oe) {
			outages = append(outages, oe)
		}
	}, zap.New(core))
	require.NoError(t, a.Handle(ctx, unknownAsk(1, 1)))

	// The submit reaches Slurm but the answer is lost; then slurmctld is
	// down for three polls.
	f.lostAnswer = true
	a.step(ctx)
	f.down = true
	var waits []time.Duration
	for range 5 {
		waits = append(waits, a.step(ctx))
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second}, waits, "backoff up to RetryMax")
	require.NotEmpty(t, outages)
	assert.ErrorIs(t, outages[len(outages)-1], ErrUnreachable)
	assert.Equal(t, 5, outages[len(outages)-1].Attempts)
	assert.NotZero(t, logs.FilterMessage("slurm controller unreachable").Len(), "logged")

	// Back: the job is found by its name, started, and granted once.
	f.down = false
	f.start(1, 1)
	assert.Equal(t, 100*time.Millisecond, a.step(ctx))
	a.step(ctx)
	assert.Equal(t, 1, f.submits, "not submitted twice")
	got := s.take()
	require.Len(t, got, 1)
	assert.Len(t, got[0].(slotpool.Grant).Slots, 1)
}

func TestAdapterSetPriorityAudits(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low"), prio: map[JobID]int64{}, operator: "root"}
	a, _ := newAdapter(t, f, nil, nil)
	var audit []AuditRecord
	a.cfg.Auditor = func(r AuditRecord) { audit = append(audit, r) }
	require.NoError(t, a.Handle(ctx, unknownAsk(1, 1)))
	a.step(ctx)
	f.jobs[0].Priority = 100
	a.step(ctx)

	err := a.SetPriority(ctx, "alice", 9000)
	var pe *PriorityError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, ErrPermissionDenied)
	assert.Equal(t, "alice", pe.Principal)
	assert.Equal(t, JobID(1), pe.Job)
	require.NoError(t, a.SetPriority(ctx, "root", 9000))
	assert.Equal(t, int64(9000), f.prio[1])
	require.Len(t, audit, 2)
	assert.Equal(t, AuditRecord{At: audit[0].At, Principal: "alice", Job: 1, Old: 100, New: 9000, Reason: "Access/permission denied"}, audit[0])
	assert.True(t, audit[1].Accepted)

	// The job's owner lowers it: Slurm applies it though scontrol exits
	// 1, and the audit follows what Slurm applied.
	f.jobs[0].User = "bob"
	require.NoError(t, a.SetPriority(ctx, "bob", 50))
	require.Len(t, audit, 3)
	assert.True(t, audit[2].Accepted, "%+v", audit[2])
	assert.Equal(t, int64(50), f.jobs[0].Priority)
	err = a.SetPriority(ctx, "bob", 60000)
	assert.ErrorIs(t, err, ErrPermissionDenied, "an owner's raise is refused")
	require.Len(t, audit, 4)
	assert.False(t, audit[3].Accepted)
}

func TestAdapterStopCancelsWhatIsLeft(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low")}
	a, _ := newAdapter(t, f, nil, nil)
	require.NoError(t, a.Handle(ctx, unknownAsk(1, 1), unknownAsk(2, 1)))
	a.step(ctx)
	require.NoError(t, a.Stop(ctx))
	assert.Equal(t, []JobID{1, 2}, f.cancels)
}

func TestAdapterRefusalGoesToOnError(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low")}
	var got []error
	a, _ := newAdapter(t, f, func(err error) { got = append(got, err) }, nil)
	err := a.Handle(ctx, unknownAsk(1, 99))
	assert.ErrorIs(t, err, ErrTooLarge)
	a.step(ctx)
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0], ErrTooLarge)
	assert.Zero(t, f.submits)
}

func TestStartAdapterWaitsForTheController(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeSlurm{part: recordedPartition(t, "low"), down: true}
	_, err := StartAdapter(ctx, AdapterConfig{Name: "rs", client: f})
	assert.ErrorIs(t, err, ErrBadConfig, "no sink")
	_, err = StartAdapter(ctx, AdapterConfig{Name: "", client: f, Sink: &sink{}})
	assert.ErrorIs(t, err, ErrBadConfig)

	mock := clock.NewMock()
	cancelled, stop := context.WithCancel(ctx)
	stop()
	_, err = StartAdapter(cancelled, AdapterConfig{Name: "rs", client: f, Sink: &sink{}, Clock: mock})
	assert.ErrorIs(t, err, context.Canceled, "down, and the caller gave up")

	f.down = false
	s := &sink{}
	a, err := StartAdapter(ctx, AdapterConfig{Name: "rs", client: f, Sink: s, Clock: mock})
	require.NoError(t, err)
	require.NoError(t, a.Stop(ctx))
	<-a.Done()
	require.Len(t, s.got, 1)
	assert.IsType(t, slotpool.Capacity{}, s.got[0])
}

// badOutput is a fakeSlurm whose squeue answers garbage.
type badOutput struct{ *fakeSlurm }

func (badOutput) query(context.Context, []string) ([]jobStatus, error) {
	return nil, &CommandError{Command: "squeue", Err: ErrBadOutput}
}

func TestAdapterBacksOffOnUnreadableAnswers(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low")}
	a, _ := newAdapter(t, f, nil, nil)
	a.cfg.client = badOutput{f}
	require.NoError(t, a.Handle(ctx, unknownAsk(1, 1)))
	var waits []time.Duration
	for range 3 {
		waits = append(waits, a.step(ctx))
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, waits)
}

// refusingCancel is a fakeSlurm that refuses to cancel one job.
type refusingCancel struct {
	*fakeSlurm
	refuse JobID
}

func (f refusingCancel) Cancel(ctx context.Context, name string, job JobID) error {
	if job == f.refuse {
		return &CommandError{Command: "scancel", Stderr: "Invalid job id specified", Err: errors.New("exit status 1")}
	}
	return f.fakeSlurm.Cancel(ctx, name, job)
}

// A cancel Slurm refuses is returned by Stop even when a later cancel
// succeeds.
func TestAdapterStopReturnsARefusedCancel(t *testing.T) {
	ctx := context.Background()
	f := &fakeSlurm{part: recordedPartition(t, "low")}
	a, _ := newAdapter(t, f, nil, nil)
	a.cfg.client = refusingCancel{fakeSlurm: f, refuse: 1}
	require.NoError(t, a.Handle(ctx, unknownAsk(1, 1), unknownAsk(2, 1)))
	a.step(ctx)
	err := a.Stop(ctx)
	var ce *CommandError
	require.ErrorAs(t, err, &ce, "job 1's cancel was refused")
	assert.Equal(t, "scancel", ce.Command)
	assert.Equal(t, []JobID{2}, f.cancels, "job 2 was cancelled after it")
}
