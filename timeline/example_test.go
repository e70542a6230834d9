package timeline_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/timeline"
	"github.com/regionsched/regionsched/topology"
)

// FLIP-119's example in pointwise mode on 2 slots, its events recorded,
// drawn as SVG: one bar per task attempt on two slot rows, coloured by
// region.
func Example() {
	f, err := os.Open("../examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.PointwisePipelinedOnly)

	res, err := simulator.Run(simulator.Config{
		Regions: rs,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 2}},
		Seed:    1,
		Record:  true, // keep the events for the picture
	})
	if err != nil {
		panic(err)
	}
	var svg bytes.Buffer
	err = timeline.WriteSVG(&svg, timeline.Timeline{
		Title: job.Name(), Subtitle: "2 slots, pointwise-pipelined-only",
		Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan,
		Events: res.Events, Verdict: res.Verdict, Reason: res.Reason,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Reason)
	fmt.Println(bytes.HasPrefix(svg.Bytes(), []byte("<svg ")), bytes.Count(svg.Bytes(), []byte("<g><title>")), "bars")
	// Output:
	// finished: all 12 tasks finished at 4000 ms
	// true 12 bars
}

// A run's trace and picture streamed as it goes, nothing of the trace
// kept: the TraceWriter writes the JSON Lines, the Recorder the picture
// WriteSVG would draw from the recorded events.
func ExampleRecorder() {
	f, err := os.Open("../examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.PointwisePipelinedOnly)

	var trace, svg bytes.Buffer
	tw := runfile.NewTraceWriter(&trace)
	pic := timeline.NewRecorder()
	defer pic.Close()
	res, err := simulator.Run(simulator.Config{
		Regions: rs,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: 2}},
		OnEvent: func(e runfile.Event) {
			tw.Event(e)
			pic.Event(e)
		},
	})
	if err != nil {
		panic(err)
	}
	if err := tw.Flush(); err != nil {
		panic(err)
	}
	tl := timeline.Timeline{Title: job.Name(), Slots: res.Slots, Regions: rs.NumRegions(), Makespan: res.Makespan,
		Verdict: res.Verdict, Reason: res.Reason}
	if err := pic.WriteSVG(&svg, tl); err != nil {
		panic(err)
	}
	fmt.Println(len(res.Events), bytes.Count(trace.Bytes(), []byte("\n")) == res.TraceEvents, bytes.HasPrefix(svg.Bytes(), []byte("<svg ")))
	// Output:
	// 0 true true
}

// Two teams' jobs drawn coloured by queue: one colour per queue, the
// queue names in the legend. A job the map lacks is an error naming it.
func Example_colorByQueue() {
	var events []runfile.Event
	for slot, job := range []string{"etl", "report", "adhoc"} {
		events = append(events,
			runfile.Event{At: 0, Kind: runfile.Deploy, Job: job, Task: "A#0", Region: 0, Slot: slot},
			runfile.Event{At: time.Second, Kind: runfile.Finish, Job: job, Task: "A#0", Region: 0, Slot: slot})
	}
	tl := timeline.Timeline{Title: "two teams", Slots: 3, Makespan: time.Second, Events: events,
		Verdict: runfile.Finished, Reason: "finished", ColorBy: timeline.ColorByQueue,
		JobQueues: map[string]string{"etl": "root.prod.etl", "report": "root.prod.etl", "adhoc": "root.adhoc"}}
	var svg bytes.Buffer
	if err := timeline.WriteSVG(&svg, tl); err != nil {
		panic(err)
	}
	fmt.Println(strings.Count(svg.String(), ">root.prod.etl</text>"), strings.Count(svg.String(), ">root.adhoc</text>"))

	delete(tl.JobQueues, "adhoc")
	err := timeline.WriteSVG(io.Discard, tl)
	var missing *timeline.JobQueueError
	fmt.Println(errors.As(err, &missing), missing.Job)
	// Output:
	// 1 1
	// true adhoc
}
