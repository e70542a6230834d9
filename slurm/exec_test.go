package slurm

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call is one command an ExecClient ran.
type call struct {
	env  []string
	name string
	args []string
}

// recorder returns a execFunc that records the calls and answers with
// answer.
func recorder(calls *[]call, answer func(name string, args []string) (string, string, error)) execFunc {
	return func(ctx context.Context, env []string, name string, args ...string) ([]byte, []byte, error) {
		*calls = append(*calls, call{env: env, name: name, args: args})
		out, errOut, err := answer(name, args)
		return []byte(out), []byte(errOut), err
	}
}

func TestExecClientSubmit(t *testing.T) {
	var calls []call
	c := &ExecClient{Conf: "/x/slurm.conf", User: "alice", exec: recorder(&calls, func(string, []string) (string, string, error) {
		return "42;regionsched\n", "", nil
	})}
	job, err := c.submit(context.Background(), "rs-a1", jobRequest{Components: []component{{Tasks: 1, CPUsPerTask: 1}}})
	require.NoError(t, err)
	assert.Equal(t, JobID(42), job)
	require.Len(t, calls, 1)
	assert.Equal(t, "runuser", calls[0].name)
	assert.Equal(t, []string{"-u", "alice", "--", "sbatch", "--parsable"}, calls[0].args[:5])
	assert.Contains(t, calls[0].env, "SLURM_CONF=/x/slurm.conf")
}

func TestExecClientErrors(t *testing.T) {
	fail := errors.New("exit status 1")
	c := &ExecClient{exec: recorder(new([]call), func(name string, args []string) (string, string, error) {
		if name == "runuser" {
			name = args[3] // runuser -u USER -- NAME ...
		}
		switch name {
		case "sbatch":
			return "", "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)", fail
		case "scontrol":
			return "", "Changes to job priority are not persistent, change nice instead for job 4", fail
		}
		return "garbage", "", nil
	})}
	_, err := c.submit(context.Background(), "rs-a1", jobRequest{})
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrUnreachable)
	assert.Equal(t, "sbatch", ce.Command)
	assert.ErrorIs(t, c.setPriority(context.Background(), "nobody", 4, 10), ErrPermissionDenied)
	_, err = c.query(context.Background(), []string{"a"})
	assert.ErrorIs(t, err, ErrBadOutput)
	jobs, err := c.query(context.Background(), nil)
	assert.NoError(t, err)
	assert.Empty(t, jobs, "no names, no call")
}

func TestExecClientTimeoutIsAnOutage(t *testing.T) {
	c := &ExecClient{exec: func(ctx context.Context, _ []string, _ string, _ ...string) ([]byte, []byte, error) {
		<-ctx.Done() // a controller that never answers
		return nil, nil, ctx.Err()
	}, Timeout: 1}
	err := c.Cancel(context.Background(), "rs-a1", 0)
	assert.ErrorIs(t, err, ErrUnreachable)
}

func TestExecClientQueryFiltersNames(t *testing.T) {
	var calls []call
	data := string(testdata(t, "squeue-mixed.json"))
	c := &ExecClient{exec: recorder(&calls, func(string, []string) (string, string, error) { return data, "", nil })}
	jobs, err := c.query(context.Background(), []string{"rs-het", "nothing"})
	require.NoError(t, err)
	require.Len(t, jobs, 2, "both components of the heterogeneous job, nothing else")
	assert.Equal(t, []string{"--json", "--states=all", "--name=rs-het,nothing"}, calls[0].args)
}

func TestExecClientPartition(t *testing.T) {
	var calls []call
	c := &ExecClient{exec: recorder(&calls, func(name string, args []string) (string, string, error) {
		if name == "scontrol" {
			return string(testdata(t, "partition-cpus2.txt")) + string(testdata(t, "partition-low.txt")), "", nil
		}
		return string(testdata(t, "sinfo-low.txt")), "", nil
	})}
	p, err := c.partition(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "low", p.Name, "the default partition")
	assert.Len(t, p.Nodes, 4)
	assert.True(t, slices.Contains(calls[1].args, "low"))
	_, err = c.partition(context.Background(), "gpu")
	assert.ErrorIs(t, err, ErrRejected)
}

func TestRunProcessKillsTheWholeGroup(t *testing.T) {
	// runuser leaves its child holding the output pipes when it is
	// killed; the whole group goes, and Run returns.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, _, err := runProcess(ctx, nil, "/bin/sh", "-c", "sleep 30 & sleep 30")
	require.Error(t, err)
	assert.Less(t, time.Since(began), 3*time.Second)
}
