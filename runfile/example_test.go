package runfile_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/regionsched/regionsched/runfile"
)

// Write two events of a trace with a TraceWriter and read them back.
func Example() {
	var trace bytes.Buffer
	tw := runfile.NewTraceWriter(&trace)
	tw.Event(runfile.Event{At: 0, Kind: runfile.Deploy, Task: "A#0", Region: 0, Slot: 1})
	tw.Event(runfile.Event{At: time.Second, Kind: runfile.Finish, Task: "A#0", Region: 0, Slot: 1})
	if err := tw.Flush(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(trace.String())

	events, err := runfile.ReadTrace(&trace, "trace.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		fmt.Println(e.At, e.Kind, e.Task, "in slot", e.Slot)
	}
	// Output:
	// {"t": 0, "event": "deploy", "task": "A#0", "region": 0, "slot": 1, "attempt": 0}
	// {"t": 1000, "event": "finish", "task": "A#0", "region": 0, "slot": 1, "attempt": 0}
	// 0s deploy A#0 in slot 1
	// 1s finish A#0 in slot 1
}

// Decode a cluster file: its slots, and a bad one's error with the JSON
// path of the field at fault.
func ExampleDecodeCluster() {
	cluster, err := runfile.DecodeCluster([]byte(`{"slots": [{"count": 6, "resources": {"cpuMillis": 2250, "memoryMB": 4608}}, {"count": 2}],
		"users": [{"name": "alice", "role": "admin"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cluster.Counts() {
		fmt.Println(c.N, "slots of", c.Profile)
	}
	fmt.Println(cluster.Users[0].Name, "is", cluster.Users[0].Role)

	_, err = runfile.DecodeCluster([]byte(`{"slots": [{"count": 2, "Node": "n1"}]}`))
	fmt.Println(err)
	// Output:
	// 6 slots of {cpu=2250m mem=4608MB}
	// 2 slots of unknown
	// alice is admin
	// field "slots[0].Node": unknown field: field names are case-sensitive, did you mean "node"? valid fields: count, resources, node
}

// Read an events file: the events come sorted by time; a bad line names
// the file, the line and the field.
func ExampleReadEvents() {
	file := `{"t": 6000, "event": "kill", "job": "adhoc", "by": "bob"}
{"t": 4000, "event": "set-priority", "job": "etl", "priority": 9000, "by": "alice"}`
	events, err := runfile.ReadEvents(strings.NewReader(file), "events.jsonl", []string{"etl", "adhoc"}, 10000)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		fmt.Println(e.At, e.By, e.Action, e.Job)
	}
	_, err = runfile.ReadEvents(strings.NewReader(`{"t": 1, "event": "kill", "job": "web", "by": "bob"}`), "events.jsonl", []string{"etl", "adhoc"}, 10000)
	fmt.Println(err)
	// Output:
	// 4s alice set-priority etl
	// 6s bob kill adhoc
	// events file events.jsonl line 1: field "job": "web" names no job of the run (jobs: etl, adhoc)
}
