package slurm

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

func TestMapProfiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile resource.Profile
		want    component
	}{
		{"unknown: the default CPUs", resource.Unknown, component{Tasks: 2, CPUsPerTask: 1}},
		{"cpu rounded up per slot", resource.New(1500, 0), component{Tasks: 2, CPUsPerTask: 2}},
		{"less than a CPU is one", resource.New(250, 0), component{Tasks: 2, CPUsPerTask: 1}},
		{"memory per CPU rounded up", resource.New(2000, 1025), component{Tasks: 2, CPUsPerTask: 2, MemPerCPU: 513}},
		{"gpu per task", resource.New(1000, 0).WithExtended("gpu", 2), component{Tasks: 2, CPUsPerTask: 1, GPUsPerTask: 2}},
		{"other gres per node", resource.New(1000, 0).WithExtended("nic", 1).WithExtended("fpga", 2), component{Tasks: 2, CPUsPerTask: 1, Gres: []string{"fpga:2", "nic:1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := mapGang(slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: tc.profile, MinMembers: 2}}}, "low", 1)
			require.NoError(t, err)
			tc.want.Profile = tc.profile
			assert.Equal(t, jobRequest{Partition: "low", Components: []component{tc.want}}, req)
		})
	}
}

func TestMapRejects(t *testing.T) {
	_, err := mapGang(slotpool.Gang{}, "", 1)
	assert.ErrorIs(t, err, ErrRejected)
	_, err = mapGang(slotpool.Gang{Groups: []slotpool.TaskGroup{{MinMembers: 0}}}, "", 1)
	assert.ErrorIs(t, err, ErrRejected)
	_, err = mapGang(slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(1, 1).WithExtended("a:b", 1), MinMembers: 1}}}, "", 1)
	assert.ErrorIs(t, err, ErrRejected)
	req, err := mapGang(slotpool.Gang{Groups: []slotpool.TaskGroup{{MinMembers: 1}}}, "", 0)
	require.NoError(t, err)
	assert.Equal(t, 1, req.Components[0].CPUsPerTask, "default CPUs at least 1")
}

func TestSbatchArgs(t *testing.T) {
	req := jobRequest{Partition: "low", Components: []component{
		{Tasks: 2, CPUsPerTask: 1, MemPerCPU: 100},
		{Tasks: 1, CPUsPerTask: 2, GPUsPerTask: 1},
		{Tasks: 3, CPUsPerTask: 1, Gres: []string{"nic:1"}},
	}}
	assert.Equal(t, []string{"--parsable", "--no-requeue", "--job-name=etl-a3", "--output=/dev/null", "--error=/dev/null", "--chdir=/",
		"--account=x",
		"--partition=low", "--ntasks=2", "--cpus-per-task=1", "--mem-per-cpu=100", ":",
		"--partition=low", "--ntasks=1", "--cpus-per-task=2", "--gpus-per-task=1", ":",
		"--partition=low", "--ntasks=3", "--cpus-per-task=1", "--ntasks-per-node=1", "--gres=nic:1",
		"--wrap=exec sleep infinity"}, req.SbatchArgs("etl-a3", "--account=x"))
	assert.Equal(t, 6, req.Components[1].CPUs()+req.Components[0].CPUs()+req.Components[2].CPUs()-1)
}

func TestStepArgs(t *testing.T) {
	assert.Equal(t, []string{"--jobid=6", "--het-group=1", "--overlap", "--ntasks=1", "--nodes=1", "--nodelist=n2", "--cpus-per-task=2", "--quiet", "--", "sleep", "1"},
		stepArgs(slotPlacement{Job: 6, HetGroup: 1, Node: "n2", CPUs: 2}, []string{"sleep", "1"}))
	assert.Equal(t, []string{"--jobid=6", "--overlap", "--ntasks=1", "--nodes=1", "--quiet", "--", "true"},
		stepArgs(slotPlacement{Job: 6, HetGroup: -1}, []string{"true"}))
}

// mapGang turns a gang of two profiles into a heterogeneous Slurm job.
func ExampleMap() {
	gang := slotpool.Gang{AllOrNothing: true, Groups: []slotpool.TaskGroup{
		{Profile: resource.New(500, 1024), MinMembers: 4},
		{Profile: resource.New(2000, 0).WithExtended("gpu", 1), MinMembers: 1},
	}}
	req, err := mapGang(gang, "batch", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, arg := range req.SbatchArgs("etl-a1") {
		fmt.Println(arg)
	}
	// Output:
	// --parsable
	// --no-requeue
	// --job-name=etl-a1
	// --output=/dev/null
	// --error=/dev/null
	// --chdir=/
	// --partition=batch
	// --ntasks=4
	// --cpus-per-task=1
	// --mem-per-cpu=1024
	// :
	// --partition=batch
	// --ntasks=1
	// --cpus-per-task=2
	// --gpus-per-task=1
	// --wrap=exec sleep infinity
}

// The time limit goes to sbatch in whole minutes rounded up, then the
// comment, the request's extra options and the caller's, all before the
// first component.
func TestSbatchArgsTimeCommentExtra(t *testing.T) {
	base := []string{"--parsable", "--no-requeue", "--job-name=j", "--output=/dev/null", "--error=/dev/null", "--chdir=/"}
	tail := []string{"--ntasks=1", "--cpus-per-task=1", "--wrap=exec sleep infinity"}
	for _, tc := range []struct {
		name  string
		req   jobRequest
		extra []string
		want  []string
	}{
		{"none", jobRequest{}, nil, nil},
		{"90 s is 2 minutes", jobRequest{TimeLimit: 90 * time.Second}, nil, []string{"--time=2"}},
		{"a minute is 1", jobRequest{TimeLimit: time.Minute}, nil, []string{"--time=1"}},
		{"a second is 1", jobRequest{TimeLimit: time.Second}, nil, []string{"--time=1"}},
		{"an hour", jobRequest{TimeLimit: time.Hour}, nil, []string{"--time=60"}},
		{"comment", jobRequest{Comment: "regionsched-run=r1"}, nil, []string{"--comment=regionsched-run=r1"}},
		{"all", jobRequest{TimeLimit: 61 * time.Second, Comment: "c", Extra: []string{"--qos=low", "--account=x"}}, []string{"--reservation=r"},
			[]string{"--time=2", "--comment=c", "--qos=low", "--account=x", "--reservation=r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Components = []component{{Tasks: 1, CPUsPerTask: 1}}
			want := append(append(append([]string(nil), base...), tc.want...), tail...)
			assert.Equal(t, want, tc.req.SbatchArgs("j", tc.extra...))
		})
	}
}

// A jobCore's sbatch carries its configured time limit, comment and extra
// options.
func TestCoreRequestCarriesTheConfig(t *testing.T) {
	c, err := newJobCore(jobConfig{Name: "rs", TimeLimit: 90 * time.Second, Comment: "regionsched-run=r1", ExtraArgs: []string{"--account=x"}},
		recordedPartition(t, "low"))
	require.NoError(t, err)
	require.NoError(t, c.handle(t0, unknownAsk(1, 2)))
	cmds := c.commands()
	require.Len(t, cmds, 1)
	assert.Equal(t, jobRequest{Partition: "low", Components: []component{{Profile: resource.Unknown, Tasks: 2, CPUsPerTask: 1}},
		TimeLimit: 90 * time.Second, Comment: "regionsched-run=r1", Extra: []string{"--account=x"}}, cmds[0].Request)

	for _, cfg := range []jobConfig{{Name: "rs", Comment: "two\nlines"}, {Name: "rs", TimeLimit: -time.Second}, {Name: "rs", DefaultCPUs: -1}} {
		_, err := newJobCore(cfg, partition{})
		assert.ErrorIs(t, err, ErrBadConfig, "%+v", cfg)
	}
}

// A time limit goes to Slurm in whole minutes, rounded up, and never
// overflows.
func TestRoundTimeLimit(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, 0},
		{time.Second, time.Minute},
		{time.Minute, time.Minute},
		{30*time.Minute + time.Nanosecond, 31 * time.Minute},
		{math.MaxInt64, math.MaxInt64 / time.Minute * time.Minute},
		{math.MaxInt64 - time.Minute, math.MaxInt64 / time.Minute * time.Minute},
	} {
		assert.Equal(t, c.want, RoundTimeLimit(c.in), "%v", c.in)
	}
}
