package slurm

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// t0 is the start of every test's time.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testdata reads a recorded command output.
func testdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return data
}

// recordedPartition is partition name as scontrol and sinfo described it
// on the test cluster of scripts/slurm-up.sh.
func recordedPartition(t *testing.T, name string) partition {
	t.Helper()
	parts, err := parsePartitions(string(testdata(t, "partition-"+name+".txt")))
	require.NoError(t, err)
	require.Len(t, parts, 1)
	p := parts[0]
	p.Nodes, err = parseNodes(string(testdata(t, "sinfo-"+name+".txt")))
	require.NoError(t, err)
	return p
}

// recordedJobs returns the recorded squeue statuses of a file.
func recordedJobs(t *testing.T, name string) []jobStatus {
	t.Helper()
	jobs, err := parseSqueue(testdata(t, name))
	require.NoError(t, err)
	return jobs
}

// jobByID picks a recorded status and renames it as an allocation's job.
func jobByID(t *testing.T, jobs []jobStatus, id JobID, name string) jobStatus {
	t.Helper()
	for _, j := range jobs {
		if j.ID == id {
			j.Name = name
			return j
		}
	}
	require.FailNow(t, "no recorded job", "%d", id)
	return jobStatus{}
}

// newCore returns a jobCore named "rs" on the recorded partition "low".
func newCore(t *testing.T) *jobCore {
	t.Helper()
	c, err := newJobCore(jobConfig{Name: "rs"}, recordedPartition(t, "low"))
	require.NoError(t, err)
	require.Equal(t, []slotpool.FromAdmission{slotpool.Capacity{Slots: []resource.Count{{Profile: resource.Unknown, N: 16}}}}, c.ready())
	return c
}

// unknownAsk is an all-or-nothing ask of n slots of the Unknown profile.
func unknownAsk(id slotpool.AskID, n int) slotpool.Ask {
	return slotpool.Ask{ID: id, Bulk: slotpool.BulkID(id), Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: resource.Unknown, MinMembers: n}}}}
}

// running is a status of a running job of one component.
func running(id JobID, name string, nodes ...nodeCPUs) jobStatus {
	return jobStatus{ID: id, Name: name, State: "RUNNING", Reason: "None", Nodes: nodes}
}
