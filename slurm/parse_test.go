package slurm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The outputs in testdata were recorded on the cluster of
// scripts/slurm-up.sh (Slurm 22.05.8, Debian 12).

func TestParseSqueueMixed(t *testing.T) {
	jobs := recordedJobs(t, "squeue-mixed.json")
	require.Len(t, jobs, 7)
	pre := jobByID(t, jobs, 1, "rs-test")
	assert.Equal(t, "PREEMPTED", pre.State)
	assert.True(t, pre.Preempted)
	assert.True(t, pre.Terminal())
	assert.Equal(t, []nodeCPUs{{"n1", 4}, {"n2", 2}}, pre.Nodes, "3 tasks of 2 CPUs")

	het0, het1 := jobByID(t, jobs, 6, "x"), jobByID(t, jobs, 7, "x")
	assert.Equal(t, JobID(6), het0.Leader())
	assert.Equal(t, JobID(6), het1.Leader())
	assert.Equal(t, 1, het1.HetOffset)
	assert.Equal(t, "RUNNING", het1.State)
	assert.False(t, het1.Terminal())
	assert.Equal(t, []nodeCPUs{{"n2", 2}}, het1.Nodes)
	assert.Equal(t, "root", het1.User)

	assert.Equal(t, "CANCELLED", jobByID(t, jobs, 3, "x").State)
	assert.Equal(t, "COMPLETED", jobByID(t, jobs, 2, "x").State)
}

func TestParseSqueuePending(t *testing.T) {
	// squeue --json -j 8,9 in 22.05: the filter is ignored, every job
	// slurmctld remembers is listed.
	jobs := recordedJobs(t, "squeue-pending.json")
	require.Len(t, jobs, 9)
	fill, gang := jobByID(t, jobs, 8, "fill"), jobByID(t, jobs, 9, "gang")
	assert.Equal(t, "RUNNING", fill.State)
	assert.Equal(t, 14, fill.Nodes[0].CPUs+fill.Nodes[1].CPUs+fill.Nodes[2].CPUs+fill.Nodes[3].CPUs)
	assert.Equal(t, "PENDING", gang.State)
	assert.Equal(t, "Resources", gang.Reason, "4 CPUs asked with 14 of 16 busy: all or nothing")
	assert.Empty(t, gang.Nodes)
	assert.False(t, gang.Terminal())
}

func TestParseSqueueControllerDown(t *testing.T) {
	_, err := parseSqueue(testdata(t, "squeue-controller-down.json"))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnreachable, "squeue exits 0 and reports it in errors")
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Stderr, "slurm_load_jobs")
}

func TestParseSqueueGarbage(t *testing.T) {
	_, err := parseSqueue([]byte("squeue: error: no"))
	assert.ErrorIs(t, err, ErrBadOutput)
}

func TestParsePartition(t *testing.T) {
	low := recordedPartition(t, "low")
	assert.Equal(t, "low", low.Name)
	assert.True(t, low.Default)
	assert.Equal(t, 0, low.MaxCPUsPerNode)
	require.Len(t, low.Nodes, 4)
	assert.Equal(t, node{Name: "n1", CPUs: 4, MemoryMB: 4096, State: "idle"}, low.Nodes[0])
	assert.Equal(t, 16, low.CPUs())

	tight := recordedPartition(t, "cpus2")
	assert.False(t, tight.Default)
	assert.Equal(t, 2, tight.MaxCPUsPerNode)
	assert.Equal(t, 2, tight.CPUs(), "a 4-CPU node of which the partition may use 2")
}

func TestParseNodesGres(t *testing.T) {
	nodes, err := parseNodes("g1|8|64000|gpu:tesla:2(S:0),nic:1|mixed\n")
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"gpu": 2, "nic": 1}, nodes[0].Gres)
	_, err = parseNodes("g1|eight|1|(null)|idle")
	assert.True(t, errors.Is(err, ErrBadOutput))
	_, err = parsePartitions("Default=YES")
	assert.ErrorIs(t, err, ErrBadOutput)
}

func TestClassify(t *testing.T) {
	for msg, want := range map[string]error{
		"sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)": ErrUnreachable,
		"Changes to job priority are not persistent, change nice instead for job 4":                        ErrPermissionDenied,
		"Invalid user id for job 3":                 ErrPermissionDenied,
		"scontrol: error: Access/permission denied": ErrPermissionDenied,
		"sbatch: error: Batch job submission failed: Requested node configuration is not available": ErrRejected,
	} {
		assert.Equal(t, want, classify(msg), msg)
	}
}

func TestStepCause(t *testing.T) {
	exit := errors.New("exit status 1")
	assert.Equal(t, ErrUnreachable, stepCause("srun: error: Unable to confirm allocation for job 5: Unable to contact slurm controller (connect failure)", exit))
	assert.Equal(t, ErrStepRefused, stepCause("srun: error: Unable to create step for job 2: Memory required by task is not available", exit))
	assert.Equal(t, ErrStepRefused, stepCause("srun: error: Unable to confirm allocation for job 9: Invalid job id specified", exit))
	assert.Equal(t, ErrRejected, stepCause("srun: error: n1: task 0: Exited with exit code 3", exit))
}

// A node takes jobs unless sinfo reports it drained, draining, down,
// failed or otherwise out of service, its state flags aside; a
// partition's usable CPUs and OutOfService follow.
func TestNodeInService(t *testing.T) {
	for state, in := range map[string]bool{
		"idle": true, "mixed": true, "allocated": true, "completing": true, "": true, "idle~": true, "mixed#": true, "IDLE": true,
		"drained": false, "draining": false, "drain": false, "down": false, "down*": false, "drained*": false, "DOWN+DRAIN": false,
		"fail": false, "failing": false, "inval": false, "maint": false, "reserved": false, "unknown": false, "powered_down": false,
	} {
		assert.Equal(t, in, node{State: state}.InService(), "%q", state)
	}
	p := partition{Name: "p", MaxCPUsPerNode: 3, Nodes: []node{{Name: "n1", CPUs: 4, State: "idle"}, {Name: "n2", CPUs: 4, State: "drained"},
		{Name: "n3", CPUs: 2, State: "down*"}, {Name: "n4", CPUs: 2, State: "mixed"}}}
	assert.Equal(t, []string{"n2 (drained)", "n3 (down*)"}, p.OutOfService())
	assert.Equal(t, 0, p.UsableCPUs(p.Nodes[1]))
	assert.Equal(t, 5, p.CPUs(), "3 of n1 (the partition's limit) and n4's 2")
	assert.Empty(t, recordedPartition(t, "low").OutOfService())
}
