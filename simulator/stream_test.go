package simulator_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

// A trace streamed through OnEvent is the recorded trace, line for line,
// with a failover in it; without Record nothing is kept.
func TestStreamedTraceIsTheRecordedOne(t *testing.T) {
	rs := region.FromJob(chains(t, 3, 4), exchange.AllPipelined)
	fail, err := simulator.ParseFailure(rs.Topology(), "v1#2@50")
	require.NoError(t, err)
	cfg := simulator.Config{Regions: rs, Cluster: slots(4), Seed: 7, Record: true, Failures: []simulator.Failure{fail}}
	recorded, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, recorded.Verdict)
	var want bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&want, recorded.Events))

	var got bytes.Buffer
	tw := runfile.NewTraceWriter(&got)
	cfg.Record, cfg.OnEvent = false, tw.Event
	streamed, err := simulator.Run(cfg)
	require.NoError(t, err)
	require.NoError(t, tw.Flush())
	assert.Empty(t, streamed.Events)
	assert.Equal(t, recorded.TraceEvents, streamed.TraceEvents)
	assert.Equal(t, want.String(), got.String())
	requireReadBack(t, got.Bytes(), recorded.Events)
}

// requireReadBack: a trace read back (runfile.ReadTrace) is the run's
// trace events, field for field.
func requireReadBack(t *testing.T, trace []byte, events []runfile.Event) {
	t.Helper()
	got, err := runfile.ReadTrace(bytes.NewReader(trace), "trace.jsonl")
	require.NoError(t, err)
	var want []runfile.Event
	for _, e := range events {
		if e.Kind.Traced() {
			want = append(want, e)
		}
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, got)
}

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A write error stops the stream and comes out of Flush.
func TestTraceWriterError(t *testing.T) {
	tw := runfile.NewTraceWriter(fullDisk{})
	for range 10_000 { // more than the buffer holds
		tw.Event(runfile.Event{Task: "A#0"})
	}
	require.EqualError(t, tw.Flush(), "disk full")
}

// A multi-job trace streamed through JobsConfig.OnEvent is the recorded
// trace, line for line, under the admission and the eager baseline; and
// the per-job times need no recorded trace: without Record they are what
// the events say (under eager: submitted at 0, first deploy the first
// task's, finished with the last task).
func TestStreamedJobsTraceIsTheRecordedOne(t *testing.T) {
	for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
		// on 4 slots the eager baseline deadlocks some jobs; on 12 every job finishes
		cfg := simulator.JobsConfig{Jobs: floodJobs(t), Mode: exchange.AllBlocking, Cluster: slots(4 + 8*int(policy)), Policy: policy,
			DefaultPolicy: admission.StateAware, Seed: 3, Record: true}
		recorded, recordedPer, err := simulator.RunJobs(cfg)
		require.NoError(t, err)
		var want bytes.Buffer
		require.NoError(t, runfile.WriteTrace(&want, recorded.Events))

		var got bytes.Buffer
		tw := runfile.NewTraceWriter(&got)
		cfg.Record, cfg.OnEvent = false, tw.Event
		streamed, per, err := simulator.RunJobs(cfg)
		require.NoError(t, err)
		require.NoError(t, tw.Flush())
		assert.Empty(t, streamed.Events)
		assert.Equal(t, recorded.TraceEvents, streamed.TraceEvents)
		assert.Equal(t, want.String(), got.String(), "%v", policy)
		requireReadBack(t, got.Bytes(), recorded.Events)
		assert.Equal(t, recordedPer, per, "%v", policy)

		first, last := map[string]time.Duration{}, map[string]time.Duration{}
		for _, e := range recorded.Events {
			if _, ok := first[e.Job]; !ok && e.Kind == runfile.Deploy && e.Task != "driver" { // a task's, not the driver's
				first[e.Job] = e.At
			}
			if e.Kind == runfile.Finish {
				last[e.Job] = max(last[e.Job], e.At)
			}
		}
		for _, j := range per {
			if at, ok := first[j.Name]; ok {
				assert.Equal(t, at, j.FirstDeploy, "%v %s", policy, j.Name)
			} else {
				assert.Equal(t, time.Duration(-1), j.FirstDeploy, "%v %s", policy, j.Name)
			}
			if j.Verdict == runfile.Finished {
				assert.Equal(t, last[j.Name], j.Finished, "%v %s", policy, j.Name)
			}
			if policy == simulator.EagerPolicy && j.FirstDeploy >= 0 {
				assert.GreaterOrEqual(t, j.FirstDeploy, j.Submitted, "%s: none of its tasks asks before it arrives", j.Name)
			}
		}
	}
}
