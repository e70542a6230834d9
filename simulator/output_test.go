package simulator_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

func TestDeterministicForASeed(t *testing.T) {
	for _, mode := range modes {
		rs := region.FromJob(flip119(t), mode)
		x, err := rs.Topology().ParseVertexName("C#1")
		require.NoError(t, err)
		for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
			for seed := uint64(1); seed <= 10; seed++ {
				cfg := simulator.Config{Regions: rs, Cluster: slots(4), Policy: policy, Seed: seed, Ties: tiesFor(seed), Record: true,
					Failures: []simulator.Failure{{Task: x, After: 300 * time.Millisecond}}}
				a, b := run(t, cfg), run(t, cfg)
				require.Equal(t, a, b, "%v %v seed %d", mode, policy, seed)
				var ta, tb bytes.Buffer
				require.NoError(t, runfile.WriteTrace(&ta, a.Events))
				require.NoError(t, runfile.WriteTrace(&tb, b.Events))
				require.Equal(t, ta.String(), tb.String())
			}
		}
	}
}

// Different seeds order simultaneous events and the offer of slots
// differently; the outcome of the region policy does not change.
func TestSeedsReorderSimultaneousEvents(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	traces := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		res := run(t, simulator.Config{Regions: rs, Cluster: slots(3), Seed: seed, Ties: tiesFor(seed), Record: true})
		require.Equal(t, runfile.Finished, res.Verdict)
		assert.Equal(t, 6*time.Second, res.Makespan, "A 0-1 s, B 1-2 s, C 2-4 s, D 4-6 s")
		var b bytes.Buffer
		require.NoError(t, runfile.WriteTrace(&b, res.Events))
		traces[b.String()] = true
	}
	assert.Greater(t, len(traces), 1, "seeds change the order of simultaneous events or the slots chosen")
}

func TestParseFailure(t *testing.T) {
	topo := region.FromJob(flip119(t), exchange.AllBlocking).Topology()
	f, err := simulator.ParseFailure(topo, "A#1@500")
	require.NoError(t, err)
	assert.Equal(t, "A#1", topo.VertexName(f.Task))
	assert.Equal(t, 500*time.Millisecond, f.After)

	f, err = simulator.ParseFailure(topo, "D#3@0")
	require.NoError(t, err)
	assert.Equal(t, "D#3", topo.VertexName(f.Task))
	assert.Zero(t, f.After)

	for _, spec := range []string{"A#9@1", "A@1", "A#1@x", "A#1@-1", "A#1", "", "@500", "Z#0@1", "A#1@1.5", "A#1@500ms", "A#01@1"} {
		_, err := simulator.ParseFailure(topo, spec)
		require.Error(t, err, spec)
		assert.True(t, errors.Is(err, simulator.ErrBadFailure), "%q: %v", spec, err)
		if spec != "" {
			assert.Contains(t, err.Error(), spec)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := simulator.ParsePolicy("region")
	require.NoError(t, err)
	assert.Equal(t, simulator.RegionPolicy, p)
	assert.Equal(t, "region", p.String())
	p, err = simulator.ParsePolicy("eager")
	require.NoError(t, err)
	assert.Equal(t, simulator.EagerPolicy, p)
	assert.Equal(t, "eager", p.String())
	for _, s := range []string{"", "fifo", "regions", "lazy"} {
		_, err := simulator.ParsePolicy(s)
		require.Error(t, err, s)
		assert.True(t, errors.Is(err, simulator.ErrUnknownPolicy))
		assert.Contains(t, err.Error(), "region, eager")
	}
}

func TestVerdictAndKindNames(t *testing.T) {
	assert.Equal(t, "finished", runfile.Finished.String())
	assert.Equal(t, "running", runfile.Steady.String())
	assert.Equal(t, "deadlock", runfile.Deadlock.String())
	assert.Equal(t, "failed", runfile.Failed.String())
	assert.Equal(t, "invalid", runfile.Verdict(9).String())
	assert.True(t, runfile.Finished.OK())
	assert.True(t, runfile.Steady.OK())
	assert.False(t, runfile.Deadlock.OK())
	assert.False(t, runfile.Failed.OK())
	var names []string
	for k := runfile.Request; k <= runfile.Release; k++ {
		names = append(names, k.String())
	}
	assert.Equal(t, []string{"request", "deploy", "finish", "fail", "cancel", "release"}, names)
	assert.Equal(t, "unknown", runfile.Kind(42).String())
}

func TestRunRejectsBadConfig(t *testing.T) {
	_, err := simulator.Run(simulator.Config{})
	require.Error(t, err)
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	_, err = simulator.Run(simulator.Config{Regions: rs, Cluster: slots(-1)})
	require.Error(t, err)
	// a run that processes too many events is stopped, not left running
	_, err = simulator.Run(simulator.Config{Regions: rs, Cluster: slots(1), MaxEvents: 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than 3 events")
}

// No slots at all: the region policy fails the job at once.
func TestEmptyCluster(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Seed: 1})
	require.Equal(t, runfile.Failed, res.Verdict, res.Reason)
	assert.Zero(t, res.Slots)
	assert.Zero(t, res.Utilization)
	res = run(t, simulator.Config{Regions: rs, Seed: 1, Policy: simulator.EagerPolicy})
	require.Equal(t, runfile.Deadlock, res.Verdict, res.Reason)
	assert.Len(t, res.Waiting, 2, "A#0 and A#1 wait for a slot")
}

type traceLine struct {
	T       *int64  `json:"t"`
	Event   *string `json:"event"`
	Task    *string `json:"task"`
	Region  *int    `json:"region"`
	Slot    *int    `json:"slot"`
	Attempt *int    `json:"attempt"`
}

func TestWriteTraceJSONLines(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.PointwisePipelinedOnly)
	x, err := rs.Topology().ParseVertexName("B#1")
	require.NoError(t, err)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 5, Record: true,
		Failures: []simulator.Failure{{Task: x, After: 250 * time.Millisecond}}})
	require.Equal(t, runfile.Finished, res.Verdict)
	var buf bytes.Buffer
	require.NoError(t, runfile.WriteTrace(&buf, res.Events))

	kinds := map[string]int{}
	sc := bufio.NewScanner(&buf)
	var last int64
	n := 0
	for sc.Scan() {
		line := sc.Text()
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &raw), line)
		var l traceLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&l), line)
		require.NotNil(t, l.T, line)
		require.NotNil(t, l.Event, line)
		require.NotNil(t, l.Task, line)
		require.NotNil(t, l.Region, line)
		assert.GreaterOrEqual(t, *l.T, last, "time order: %s", line)
		last = *l.T
		if *l.Event == "request" {
			assert.Nil(t, l.Slot, "a request has no slot: %s", line)
		} else {
			require.NotNil(t, l.Slot, line)
			assert.GreaterOrEqual(t, *l.Slot, 0)
			assert.Less(t, *l.Slot, 2)
		}
		ev := res.Events[n]
		assert.Equal(t, ev.At.Milliseconds(), *l.T)
		assert.Equal(t, ev.Kind.String(), *l.Event)
		assert.Equal(t, ev.Task, *l.Task)
		assert.Equal(t, ev.Region, *l.Region)
		kinds[*l.Event]++
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(res.Events), n)
	for _, k := range []string{"request", "deploy", "finish", "fail", "cancel", "release"} {
		assert.Positive(t, kinds[k], "the trace shows %s events", k)
	}
	// exactly the example line of docs/cli.md, plus the attempt
	line := runfile.Event{At: time.Second, Kind: runfile.Finish, Task: "A#0", Region: 0, Slot: 1}.AppendJSON(nil)
	assert.Equal(t, `{"t": 1000, "event": "finish", "task": "A#0", "region": 0, "slot": 1, "attempt": 0}`, string(line))
	// names are quoted
	line = runfile.Event{Kind: runfile.Request, Task: `we"ird#0`, Slot: runfile.NoSlot}.AppendJSON(nil)
	var l traceLine
	require.NoError(t, json.Unmarshal(line, &l), string(line))
	assert.Equal(t, `we"ird#0`, *l.Task)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWritersReportErrors(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	res := run(t, simulator.Config{Regions: rs, Cluster: slots(2), Seed: 1, Record: true})
	assert.Error(t, runfile.WriteTrace(failingWriter{}, res.Events))
}

// Utilization splits into time in which work progressed and time slots
// were held by tasks that could not progress; a deadlocked run's waiting
// is not work.
func TestUtilizationSplitsWorkAndWaiting(t *testing.T) {
	for _, mode := range modes {
		rs := region.FromJob(flip119(t), mode)
		x, err := rs.Topology().ParseVertexName("C#1")
		require.NoError(t, err)
		for _, policy := range []simulator.Policy{simulator.RegionPolicy, simulator.EagerPolicy} {
			for seed := uint64(1); seed <= 5; seed++ {
				res := run(t, simulator.Config{Regions: rs, Cluster: slots(4), Policy: policy, Seed: seed, Ties: tiesFor(seed), Record: true,
					Failures: []simulator.Failure{{Task: x, After: 300 * time.Millisecond}}})
				assert.InDelta(t, res.Utilization, res.WorkUtilization+res.HeldWaiting, 1e-9, "%v %v seed %d", mode, policy, seed)
				assert.GreaterOrEqual(t, res.HeldWaiting, 0.0)
				assert.Equal(t, len(res.Events), res.TraceEvents, "every trace event is counted")
				if res.Verdict == runfile.Deadlock && res.Makespan > 0 {
					assert.Less(t, res.WorkUtilization, res.Utilization, "%v %v seed %d: waiting in a deadlock is not work", mode, policy, seed)
				}
			}
		}
	}
	res := run(t, simulator.Config{Regions: region.FromJob(flip119(t), exchange.AllPipelined), Cluster: slots(4), Policy: simulator.EagerPolicy,
		Seed: 1, Ties: simulator.TiesSeeded})
	require.Equal(t, runfile.Deadlock, res.Verdict)
	assert.InDelta(t, 3.0/8, res.WorkUtilization, 1e-9, "B#1 works 0-2 s, A#0 and A#1 0-1 s, of 4 slots for 2 s")
	assert.InDelta(t, 5.0/8, res.HeldWaiting, 1e-9)
	assert.Equal(t, 21, res.TraceEvents, "counted even when not recorded")
	assert.Empty(t, res.Events)
}
