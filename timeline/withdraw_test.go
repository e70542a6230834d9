package timeline_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
)

// killedWhileWaiting runs job a on the one slot for 3000 ms while job b,
// submitted at 500 ms, waits with two requests until alice kills it at
// 1500 ms.
func killedWhileWaiting(t *testing.T) *simulator.Result {
	t.Helper()
	res, _, err := simulator.RunJobs(simulator.JobsConfig{
		Jobs: []runfile.Job{
			decodeJob(t, `{"name":"a","priority":5000,"vertices":[{"id":"x","parallelism":1,"durationMs":3000}]}`),
			decodeJob(t, `{"name":"b","priority":1000,"submitAtMs":500,"vertices":[{"id":"y","parallelism":2,"durationMs":1000}]}`),
		},
		Cluster: slots(1), Queues: []admission.QueueConfig{{Name: "root.default", Policy: admission.Priority}},
		Users:  map[string]admission.Role{"alice": admission.RoleAdmin},
		Events: []runfile.JobEvent{{At: 1500 * time.Millisecond, Action: admission.ActionKill, Job: "b", By: "alice"}},
		Record: true})
	require.NoError(t, err)
	return res
}

var rectRe = regexp.MustCompile(`<rect class="(waiting|withdrawn)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)
var barRe = regexp.MustCompile(`<title>a:x#0 [^<]*</title><rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)

func num(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return f
}

// The requests of a job killed while they wait are drawn in the waiting
// row from their request to the kill, not to the end of the run, as
// withdrawn (with their own legend entry); nothing is left waiting.
func TestWriteSVGWithdrawnRequestsStopAtTheKill(t *testing.T) {
	res := killedWhileWaiting(t)
	require.Equal(t, 3*time.Second, res.Makespan)
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "kill", Slots: res.Slots, Makespan: res.Makespan, Events: res.Events,
		Verdict: res.Verdict, Reason: res.Reason, ColorBy: timeline.ColorByJob, Jobs: []string{"a", "b"}}))
	svg := buf.String()
	st := parseSVG(t, strings.NewReader(svg))
	assertTextsInside(t, st)

	bar := barRe.FindStringSubmatch(svg)
	require.NotNil(t, bar, "a's bar, 0 to 3000 ms")
	left, width := num(t, bar[1]), num(t, bar[2])
	x := func(ms float64) float64 { return left + width*ms/3000 }

	rects := rectRe.FindAllStringSubmatch(svg, -1)
	require.Len(t, rects, 2)
	for _, r := range rects {
		assert.Equal(t, "withdrawn", r[1], "no request is drawn waiting")
		x0, w := num(t, r[2]), num(t, r[3])
		assert.InDelta(t, x(500), x0, 0.2, "from the request")
		assert.InDelta(t, x(1500), x0+w, 0.2, "to the kill")
	}
	assert.Contains(t, svg, "<title>b:y#0 withdrawn at 1500 ms as its job ended, after waiting since 500 ms</title>")
	assert.Contains(t, st.texts, "request withdrawn when its job ended")
	assert.NotContains(t, st.texts, "request waiting for a slot")
}

// The aggregated view of a large run counts a withdrawn request as
// waiting only until its withdrawal: at the deadlock only the request
// still open waits.
func TestWriteSVGAggregatedWithdrawnRequestsWaitNoMore(t *testing.T) {
	var events []runfile.Event
	events = append(events,
		runfile.Event{At: 0, Kind: runfile.Request, Job: "gone", Task: "g#0", Region: 0, Slot: runfile.NoSlot},
		runfile.Event{At: 0, Kind: runfile.Request, Job: "stuck", Task: "s#0", Region: 0, Slot: runfile.NoSlot})
	for i := range 4000 {
		at := time.Duration(i) * time.Millisecond
		task := fmt.Sprintf("m#%d", i)
		events = append(events,
			runfile.Event{At: at, Kind: runfile.Deploy, Job: "big", Task: task, Region: i, Slot: i % 5},
			runfile.Event{At: at + time.Millisecond, Kind: runfile.Finish, Job: "big", Task: task, Region: i, Slot: i % 5},
			runfile.Event{At: at + time.Millisecond, Kind: runfile.Release, Job: "big", Task: task, Region: i, Slot: i % 5})
		if i == 1000 {
			events = append(events, runfile.Event{At: at, Kind: runfile.Withdraw, Job: "gone", Task: "g#0", Region: 0, Slot: runfile.NoSlot})
		}
	}
	tl := timeline.Timeline{Title: "large", Slots: 5, Makespan: 4001 * time.Millisecond, Events: events,
		Verdict: runfile.Deadlock, Reason: "deadlock: stuck waits"}
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, tl))
	st := parseSVG(t, &buf)
	assert.Contains(t, st.texts, "1 request waits, since 0 ms")

	rec := timeline.NewRecorder()
	defer func() { assert.NoError(t, rec.Close()) }()
	for _, e := range events {
		rec.Event(e)
	}
	var streamed bytes.Buffer
	require.NoError(t, rec.WriteSVG(&streamed, tl))
	st = parseSVG(t, &streamed)
	assert.Contains(t, st.texts, "1 request waits, since 0 ms", "the recorder too")
}

// A request withdrawn because its region restarted (its task asks again
// at that instant with its next attempt) is drawn withdrawn up to the
// restart, and says so: B#0 waits from 0 for the one slot A#0 holds, A#0
// fails at 500 ms and restarts both regions.
func TestWriteSVGRequestWithdrawnByARestart(t *testing.T) {
	rs := region.FromJob(decodeJob(t, `{"name":"w","vertices":[{"id":"A","parallelism":1},{"id":"B","parallelism":1}],
		"edges":[{"source":"A","target":"B","shipStrategy":"forward","exchange":"hybrid-full"}]}`).Job, exchange.AllBlocking)
	a0, err := rs.Topology().ParseVertexName("A#0")
	require.NoError(t, err)
	res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(1), Seed: 1, Record: true, DisableHybridSlotSharing: true,
		Failures: []simulator.Failure{{Task: a0, After: 500 * time.Millisecond}}})
	require.NoError(t, err)
	require.Equal(t, runfile.Finished, res.Verdict, res.Reason)
	var buf bytes.Buffer
	require.NoError(t, timeline.WriteSVG(&buf, timeline.Timeline{Title: "restart", Slots: res.Slots, Makespan: res.Makespan, Events: res.Events,
		Verdict: res.Verdict, Reason: res.Reason}))
	svg := buf.String()
	st := parseSVG(t, strings.NewReader(svg))
	assertTextsInside(t, st)
	rects := rectRe.FindAllStringSubmatch(svg, -1)
	require.Len(t, rects, 1)
	assert.Equal(t, "withdrawn", rects[0][1])
	assert.Contains(t, svg, "<title>B#0 withdrawn at 500 ms as its region restarted, after waiting since 0 ms</title>")
	assert.Contains(t, st.texts, "request withdrawn when its region restarted")
	assert.NotContains(t, st.texts, "request withdrawn when its job ended")
	assert.NotContains(t, st.texts, "request waiting for a slot")
}
