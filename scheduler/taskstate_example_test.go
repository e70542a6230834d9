package scheduler_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// A task's state and attempt, and the errors of the reports the scheduler
// refuses, matched with errors.Is and errors.As: src(1) -hash, blocking->
// sink(1) on one slot.
func ExampleScheduler_Task() {
	job, err := topology.NewBuilder("two-vertex").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	src, _ := rs.Topology().ParseVertexName("src#0")
	sink, _ := rs.Topology().ParseVertexName("sink#0")
	s, err := scheduler.New(rs, scheduler.Config{})
	if err != nil {
		panic(err)
	}
	now := time.Unix(0, 0)
	_ = s.Offer(now, slotpool.Slots(1)...)
	_ = s.Start(now)
	s.Ready()
	for _, v := range []scheduler.TaskID{src, sink} {
		st, _ := s.Task(v)
		fmt.Printf("%s: %v, attempt %d\n", s.TaskName(v), st.State, st.Attempt)
	}

	err = s.TaskFinished(now, sink, 0) // never deployed
	var te *scheduler.TransitionError
	fmt.Println(errors.Is(err, scheduler.ErrInvalidTransition), errors.As(err, &te) && te.From == scheduler.TaskCreated)
	err = s.TaskRunning(now, src, 1) // an attempt that has not begun
	fmt.Println(errors.Is(err, scheduler.ErrUnknownAttempt))
	_, err = s.Task(7)
	var uv *scheduler.UnknownVertexError
	fmt.Println(errors.Is(err, scheduler.ErrUnknownVertex), errors.As(err, &uv) && uv.Vertex == 7)
	// Output:
	// src#0: deploying, attempt 0
	// sink#0: created, attempt 0
	// true true
	// true
	// true true
}
