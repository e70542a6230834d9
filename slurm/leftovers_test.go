package slurm

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// squeueLeftovers is what squeue -h -o "%i|%j|%T|%u|%k" printed of the
// live jobs: two runs' tagged jobs (one heterogeneous, its components
// "30+0" and "30+1"), a run whose id starts with another's, and jobs that
// are not a run's.
const squeueLeftovers = `
12|rs-etl-r1-j0-a1|RUNNING|alice|regionsched-run=r1
30+1|rs-h-r1-j1-a1|RUNNING|alice|regionsched-run=r1
30+0|rs-h-r1-j1-a1|RUNNING|alice|regionsched-run=r1
13|rs-etl-r2-j0-a1|PENDING|bob|regionsched-run=r2
15|rs-x-r10-j0-a1|RUNNING|carol|regionsched-run=r10 
14|sim|RUNNING|carol|(null)
16|other|PENDING|carol|a comment | with a bar
x7|odd|RUNNING|dave|(null)
`

// parseLeftovers keeps the jobs tagged by the run asked for (every run's
// for ""), one per heterogeneous job, sorted by run and job id.
func TestParseLeftovers(t *testing.T) {
	for _, tc := range []struct {
		run  string
		want []Leftover
	}{
		{"r1", []Leftover{
			{Job: 12, Name: "rs-etl-r1-j0-a1", State: "RUNNING", User: "alice", Run: "r1"},
			{Job: 30, Name: "rs-h-r1-j1-a1", State: "RUNNING", User: "alice", Run: "r1"},
		}},
		{"r2", []Leftover{{Job: 13, Name: "rs-etl-r2-j0-a1", State: "PENDING", User: "bob", Run: "r2"}}},
		{"r3", nil},
		{"", []Leftover{
			{Job: 12, Name: "rs-etl-r1-j0-a1", State: "RUNNING", User: "alice", Run: "r1"},
			{Job: 30, Name: "rs-h-r1-j1-a1", State: "RUNNING", User: "alice", Run: "r1"},
			{Job: 15, Name: "rs-x-r10-j0-a1", State: "RUNNING", User: "carol", Run: "r10"},
			{Job: 13, Name: "rs-etl-r2-j0-a1", State: "PENDING", User: "bob", Run: "r2"},
		}},
	} {
		got, err := parseLeftovers(squeueLeftovers, tc.run)
		require.NoError(t, err, "run %q", tc.run)
		assert.Equal(t, tc.want, got, "run %q", tc.run)
	}

	got, err := parseLeftovers("", "r1")
	require.NoError(t, err)
	assert.Empty(t, got, "no live job")

	for _, bad := range []string{
		"12|rs-etl-r1-j0-a1|RUNNING|alice",                     // a field short
		"x12|rs-etl-r1-j0-a1|RUNNING|alice|regionsched-run=r1", // a tagged job's id
		"|rs-etl-r1-j0-a1|RUNNING|alice|regionsched-run=r1",    // no id
	} {
		_, err := parseLeftovers(bad, "")
		assert.ErrorIs(t, err, ErrBadOutput, bad)
	}
}

// Leftovers runs squeue for the live jobs with the format parseLeftovers
// reads, as the client itself (not as its User), and passes its errors
// on.
func TestExecClientLeftovers(t *testing.T) {
	var calls []call
	c := &ExecClient{User: "alice", exec: recorder(&calls, func(string, []string) (string, string, error) {
		return squeueLeftovers, "", nil
	})}
	left, err := c.Leftovers(context.Background(), "r2")
	require.NoError(t, err)
	assert.Equal(t, []Leftover{{Job: 13, Name: "rs-etl-r2-j0-a1", State: "PENDING", User: "bob", Run: "r2"}}, left)
	require.Len(t, calls, 1)
	assert.Equal(t, "squeue", calls[0].name)
	assert.Equal(t, []string{"-h", "--states=PENDING,CONFIGURING,RUNNING,SUSPENDED,REQUEUED,RESIZING,COMPLETING", "-o", "%i|%j|%T|%u|%k"}, calls[0].args)

	c.exec = recorder(&calls, func(string, []string) (string, string, error) {
		return "", "squeue: error: Unable to contact slurm controller (connect failure)", errors.New("exit status 1")
	})
	_, err = c.Leftovers(context.Background(), "")
	assert.ErrorIs(t, err, ErrUnreachable)
	var ce *CommandError
	assert.ErrorAs(t, err, &ce)
}
