package slurm

// Integration tests against a running slurmctld (scripts/slurm-up.sh):
// skipped when there is none, failed when REGIONSCHED_SLURM=require.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/slurmtest"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// sinkRecorder is a Sink that keeps what it got.
type sinkRecorder struct {
	mu  sync.Mutex
	got []slotpool.FromAdmission
}

func (r *sinkRecorder) Admit(_ context.Context, msgs ...slotpool.FromAdmission) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, msgs...)
	return nil
}

// wait polls until some message satisfies ok, or fails after 20 s.
func (r *sinkRecorder) wait(t *testing.T, what string, ok func(slotpool.FromAdmission) bool) slotpool.FromAdmission {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, m := range r.got {
			if ok(m) {
				r.mu.Unlock()
				return m
			}
		}
		r.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	require.FailNow(t, "timed out waiting for "+what)
	return nil
}

// prefix is the job-name prefix of one test's allocations.
func prefix(t *testing.T) string {
	return fmt.Sprintf("rs-it%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "."))
}

// start starts an adapter of the test on the cluster.
func start(t *testing.T, conf, partition string, client *ExecClient, audit Auditor) (*Adapter, *sinkRecorder) {
	t.Helper()
	if client == nil {
		client = &ExecClient{Conf: conf}
	}
	client.Conf = conf
	rec := &sinkRecorder{}
	ctx, cancel := context.WithCancel(context.Background())
	ad, err := StartAdapter(ctx, AdapterConfig{Name: prefix(t), Partition: partition, client: client, Sink: rec,
		PollMin: 50 * time.Millisecond, PollMax: 300 * time.Millisecond, Auditor: audit})
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, ad.Stop(context.Background()))
		cancel()
		slurmtest.NoLiveJobs(t, conf, prefix(t))
	})
	return ad, rec
}

func ask(id slotpool.AskID, n int, p resource.Profile) slotpool.Ask {
	return slotpool.Ask{ID: id, Bulk: 1, Gang: slotpool.Gang{AllOrNothing: true, Groups: []slotpool.TaskGroup{{Profile: p, MinMembers: n}}}}
}

func isGrant(m slotpool.FromAdmission) bool { _, ok := m.(slotpool.Grant); return ok }

// submitOther submits a job outside the adapter and cancels it at the
// end of the test.
func submitOther(t *testing.T, conf string, args ...string) string {
	t.Helper()
	out, err := slurmtest.Command(conf, "sbatch", append([]string{"--parsable", "--no-requeue", "--output=/dev/null", "--chdir=/", "--job-name=" + strings.Replace(prefix(t), "rs-", "rso-", 1)}, args...)...)
	require.NoError(t, err, out)
	id := strings.TrimSpace(out)
	t.Cleanup(func() { _, _ = slurmtest.Command(conf, "scancel", id) })
	return id
}

// stepOutput runs script as a step on p's node (/bin/sh -c) and returns
// what it printed, trimmed.
func stepOutput(ctx context.Context, t *testing.T, client *ExecClient, p Placement, script string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, client.runStep(ctx, p, []string{"/bin/sh", "-c", script}, &out, nil))
	return strings.TrimSpace(out.String())
}

func TestSlurmGrantsSlotsOnTheirNodes(t *testing.T) {
	conf := slurmtest.Require(t)
	ad, rec := start(t, conf, "low", nil, nil)
	ctx := context.Background()
	// 6 slots of 2 CPUs: 12 CPUs, more than 2 nodes of 4.
	require.NoError(t, ad.Handle(ctx, ask(1, 6, resource.New(2000, 100))))
	g := rec.wait(t, "the grant", isGrant).(slotpool.Grant)
	require.Len(t, g.Slots, 6)
	nodes := map[string]int{}
	client := &ExecClient{Conf: conf}
	for _, s := range g.Slots {
		p, ok := ad.Placement(s.ID)
		require.True(t, ok)
		nodes[p.Node]++
		assert.Equal(t, p.Node, stepOutput(ctx, t, client, p, `echo "$SLURMD_NODENAME"`), "the step runs on its slot's node")
	}
	assert.GreaterOrEqual(t, len(nodes), 3, "the allocation spans nodes: %v", nodes)
	for _, s := range g.Slots {
		require.NoError(t, ad.Handle(ctx, slotpool.SlotRelease{Slot: s.ID, Reason: slotpool.ReasonStopped}))
	}
	rec.wait(t, "the last confirmation", func(m slotpool.FromAdmission) bool {
		rc, ok := m.(slotpool.ReleaseConfirmed)
		return ok && rc.Slot == g.Slots[5].ID
	})
	slurmtest.NoLiveJobs(t, conf, prefix(t)) // cancelled with its last slot
}

func TestSlurmHeterogeneousGang(t *testing.T) {
	conf := slurmtest.Require(t)
	ad, rec := start(t, conf, "low", nil, nil)
	ctx := context.Background()
	small, big := resource.New(1000, 100), resource.New(3000, 0)
	require.NoError(t, ad.Handle(ctx, slotpool.Ask{ID: 1, Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: 3}, {Profile: big, MinMembers: 2}}}}))
	g := rec.wait(t, "the grant", isGrant).(slotpool.Grant)
	require.Len(t, g.Slots, 5)
	client := &ExecClient{Conf: conf}
	groups := map[int]int{}
	for _, s := range g.Slots {
		p, ok := ad.Placement(s.ID)
		require.True(t, ok)
		groups[p.HetGroup]++
		assert.Equal(t, fmt.Sprintf("%s %d", p.Node, p.CPUs), stepOutput(ctx, t, client, p, `echo "$SLURMD_NODENAME $SLURM_CPUS_PER_TASK"`), "slot %d of group %d", s.ID, p.HetGroup)
	}
	assert.Equal(t, map[int]int{0: 3, 1: 2}, groups, "one component per profile")
}

func TestSlurmRefusesAnAskLargerThanThePartition(t *testing.T) {
	conf := slurmtest.Require(t)
	var refused []error
	var mu sync.Mutex
	client := &ExecClient{Conf: conf}
	rec := &sinkRecorder{}
	ad, err := StartAdapter(context.Background(), AdapterConfig{Name: prefix(t), Partition: "cpus2", client: client, Sink: rec,
		OnError: func(err error) { mu.Lock(); refused = append(refused, err); mu.Unlock() }})
	require.NoError(t, err)
	defer ad.Stop(context.Background())
	began := time.Now()
	err = ad.Handle(context.Background(), ask(1, 3, resource.Unknown))
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, "cpus2", tl.Partition)
	assert.Less(t, time.Since(began), time.Second, "at once")
	assert.Empty(t, slurmtest.LiveJobs(t, conf, prefix(t)), "nothing submitted")
	rec.mu.Lock()
	assert.Equal(t, slotpool.Capacity{Slots: []resource.Count{{Profile: resource.Unknown, N: 2}}}, rec.got[0], "the pool knows the partition's size")
	rec.mu.Unlock()
}

func TestSlurmAskReleaseCancelsThePendingJob(t *testing.T) {
	conf := slurmtest.Require(t)
	submitOther(t, conf, "--partition=cpus1", "--ntasks=1", "--wrap=exec sleep 30")
	ad, _ := start(t, conf, "cpus1", nil, nil)
	ctx := context.Background()
	require.NoError(t, ad.Handle(ctx, ask(1, 1, resource.Unknown)))
	waitFor(t, "the pending job", func() bool { return len(slurmtest.LiveJobs(t, conf, prefix(t)+"-a1")) == 1 })
	require.NoError(t, ad.Handle(ctx, slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped}))
	waitFor(t, "the job cancelled", func() bool { return len(slurmtest.LiveJobs(t, conf, prefix(t)+"-a1")) == 0 })
}

func TestSlurmPreemptionRevokes(t *testing.T) {
	conf := slurmtest.Require(t)
	ad, rec := start(t, conf, "low", nil, nil)
	ctx := context.Background()
	require.NoError(t, ad.Handle(ctx, ask(1, 4, resource.Unknown)))
	g := rec.wait(t, "the grant", isGrant).(slotpool.Grant)
	// A job of the high partition that needs the whole cluster.
	submitOther(t, conf, "--partition=high", "--ntasks=16", "--wrap=exec sleep 1")
	for _, s := range g.Slots {
		rec.wait(t, "the revoke", func(m slotpool.FromAdmission) bool {
			r, ok := m.(slotpool.Revoke)
			return ok && r.Slot == s.ID && r.Reason == slotpool.ReasonPreempted
		})
		require.NoError(t, ad.Handle(ctx, slotpool.SlotRelease{Slot: s.ID, Reason: slotpool.ReasonPreempted}))
	}
}

func TestSlurmPriorityRaiseIsSlurmsDecision(t *testing.T) {
	conf := slurmtest.Require(t)
	if os.Geteuid() != 0 {
		slurmtest.Missing(t, "needs root to act as another user (runuser)")
	}
	if _, err := user.Lookup("nobody"); err != nil {
		slurmtest.Missing(t, "no user nobody")
	}
	if out, err := exec.Command("runuser", "-u", "nobody", "--", "test", "-r", conf).CombinedOutput(); err != nil {
		t.Fatalf("user nobody cannot read %s (%v %s): make its directories readable to others", conf, err, out)
	}
	// The cluster is full, so the ask stays pending; its job is nobody's.
	submitOther(t, conf, "--partition=cpus1", "--ntasks=1", "--wrap=exec sleep 30")
	var audit []AuditRecord
	ad, _ := start(t, conf, "cpus1", &ExecClient{User: "nobody"}, func(r AuditRecord) { audit = append(audit, r) })
	ctx := context.Background()
	require.NoError(t, ad.Handle(ctx, ask(1, 1, resource.Unknown)))
	waitFor(t, "the pending job", func() bool { return len(ad.jobs()) == 1 })
	job := ad.jobs()[0].Job

	// A job starts near 4.29e9: nobody, its owner, may not raise it, but
	// may lower it (Slurm applies it, though scontrol exits 1: "not
	// persistent"); root may do both. The audit follows what Slurm applied.
	err := ad.SetPriority(ctx, "nobody", MaxPriority)
	var pe *PriorityError
	require.ErrorAs(t, err, &pe, "an ordinary user may not raise")
	assert.ErrorIs(t, err, ErrPermissionDenied)
	assert.Equal(t, "nobody", pe.Principal)
	assert.Equal(t, job, pe.Job)

	require.NoError(t, ad.SetPriority(ctx, "nobody", 100000), "its owner may lower it")
	out, err := slurmtest.Command(conf, "squeue", "-h", "-j", fmt.Sprint(job), "-o", "%Q")
	require.NoError(t, err, out)
	assert.Equal(t, "100000", strings.TrimSpace(out))

	require.NoError(t, ad.SetPriority(ctx, "", 12345), "root may")
	out, err = slurmtest.Command(conf, "squeue", "-h", "-j", fmt.Sprint(job), "-o", "%Q")
	require.NoError(t, err, out)
	assert.Equal(t, "12345", strings.TrimSpace(out))

	require.Len(t, audit, 3)
	assert.Equal(t, "nobody", audit[0].Principal)
	assert.False(t, audit[0].Accepted)
	assert.Contains(t, audit[0].Reason, "permission denied")
	assert.Equal(t, int64(MaxPriority), audit[0].New)
	assert.True(t, audit[1].Accepted, "%+v", audit[1])
	assert.Equal(t, int64(100000), audit[1].New)
	assert.True(t, audit[2].Accepted)
	assert.Equal(t, job, audit[2].Job)
}

// waitFor polls cond until it holds, or fails after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			require.FailNow(t, "timed out waiting for "+what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
