// Package strategytest provides Recorder, a recording fake of a
// strategy.Strategy for tests, the way etcd's rafttest serves raft.
//
// A Recorder wraps a real Strategy and has the calls a runtime makes
// (Start, UpdateState, RegionsToRestart, Restart) with the same
// signatures: it forwards each call and records it with what it returned.
// Code that drives a strategy through an interface of those methods can
// be given a Recorder instead, and its test asserts on the transcript:
// Steps for the calls one by one, Deployed and Released for every
// decision so far, String for a readable line per call with vertices,
// regions and partitions by name. Report drives the recorder by vertex
// name, in the current attempt of the vertex's region.
//
//	rec := strategytest.NewRecorder(strategy.New(region.FromJob(job, exchange.AllBlocking)))
//	runtime := newRuntime(rec) // takes the interface, not *strategy.Strategy
//	runtime.Run()
//	assert.Equal(t, "start: deploy {A#0} {A#1}\n...", rec.String())
//
//	// or step by step, by name:
//	d, err := rec.Report("A#0", strategy.TaskFinished)
//
// The package is for tests only; production code uses package strategy.
package strategytest
