package simulator_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// oddIDs are vertex ids docs/job-file.md allows (no '#', no whitespace)
// that a careless JSON or XML writer gets wrong.
var oddIDs = []string{"A\u0001x", "nul\x00", "esc\x1b[31m", `q"uote\back`, "<&>'", "\u007fdel", "nonchar\uffff\ufffe", "é✗🚀"}

// oddJob chains one vertex per odd id.
func oddJob(t *testing.T) *topology.JobGraph {
	t.Helper()
	b := topology.NewBuilder("odd\u0002job")
	for i, id := range oddIDs {
		b.AddVertex(topology.JobVertex{ID: id, Parallelism: 2, Duration: time.Second})
		if i > 0 {
			b.Connect(oddIDs[i-1], id, exchange.Forward)
		}
	}
	job, err := b.Build()
	require.NoError(t, err)
	return job
}

// TestTraceEscapesControlCharacters: every trace line of a run whose
// vertex ids contain control characters is valid JSON that gives the id
// back (strconv.Quote would write \x01, which JSON does not know).
func TestTraceEscapesControlCharacters(t *testing.T) {
	rs := region.FromJob(oddJob(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	require.Equal(t, runfile.Finished, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&buf, res.Events))
	tasks := map[string]bool{}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		require.True(t, json.Valid(line), "%q", line)
		var l traceLine
		require.NoError(t, json.Unmarshal(line, &l), "%q", line)
		require.NotNil(t, l.Task)
		assert.Equal(t, res.Events[n].Task, *l.Task, "the task name comes back exactly")
		tasks[*l.Task] = true
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(res.Events), n)
	for _, id := range oddIDs {
		assert.True(t, tasks[id+"#0"], "%q#0 in the trace", id)
	}

	// invalid UTF-8 (not possible from a job file, but from the library)
	line := runfile.Event{Kind: runfile.Deploy, Task: "bad\xff#0", Slot: 3}.AppendJSON(nil)
	require.True(t, json.Valid(line), "%q", line)
	var l traceLine
	require.NoError(t, json.Unmarshal(line, &l))
	assert.Equal(t, "bad\ufffd#0", *l.Task)
	assert.Contains(t, string(line), `"task": "bad\ufffd#0"`)
}
