package simulator

import (
	"sync"

	"github.com/regionsched/regionsched/internal/reuse"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
)

// storage is what a run leaves to the next: the schedulers it ran, which
// the next run resets for its own jobs (scheduler.Reset keeps their
// strategy's and pool's tables), the model's tables and the engine's
// slot tables. Runs one after another — a seed sweep, a benchmark, a
// what-if loop — then allocate them once, not once per run. The tables
// are most of what a run allocates, so the garbage collector has less to
// do, and the runtime mostly no longer gives memory back to the system
// between runs only to fault it in again (BenchmarkSimulate's blocking
// shuffle: about 450 page faults a run before, a fifth of its time).
//
// Nothing in a Result refers to storage, and every table is reset when
// it is taken, so a run's outcome does not depend on which storage it
// got (TestReusedStorageRunsAsNew).
type storage struct {
	scheds []*scheduler.Scheduler
	// served is, per scheduler of scheds, the most tasks of a job it ran:
	// its tables have room for such a job, and its Reset costs as much.
	served       map[*scheduler.Scheduler]int
	tasks        []task
	runs         []taskRun
	slots        []slotRec
	slotProfiles []resource.Profile
	offered      []slotpool.Slot // the slots offered to the pool or the admission
}

// storages holds the storage of finished runs. A sync.Pool: runs on
// several goroutines take their own, and what no run takes is dropped
// by the garbage collector.
var storages sync.Pool

// takeStorage returns the storage of a finished run, or an empty one.
func takeStorage() *storage {
	if st, ok := storages.Get().(*storage); ok {
		return st
	}
	return &storage{}
}

// scheduler returns a scheduler for rs and cfg: one of st's, reset, or a
// new one if st has none or only one whose tables are too large for the
// job (see tooLarge).
func (st *storage) scheduler(rs *region.Regions, cfg scheduler.Config) *scheduler.Scheduler {
	tasks := rs.Topology().NumExecutionVertices()
	if n := len(st.scheds); n > 0 {
		s := st.scheds[n-1]
		st.scheds[n-1] = nil
		st.scheds = st.scheds[:n-1]
		if !tooLarge(st.served[s], tasks) {
			s.Reset(rs, cfg)
			st.served[s] = max(st.served[s], tasks)
			return s
		}
		delete(st.served, s)
	}
	s := scheduler.New(rs, cfg)
	if st.served == nil {
		st.served = map[*scheduler.Scheduler]int{}
	}
	st.served[s] = tasks
	return s
}

// tooLarge reports whether storage with room for have tasks is too large
// to keep for a job of need tasks. Resetting storage costs time in
// proportion to its size: a sweep of small runs after a large one would
// pay the large one's reset every run, and keep its memory.
func tooLarge(have, need int) bool { return have > 4*need+4096 }

// sized returns n zero values in old's storage, or in new storage if old
// is too large to keep for n (see tooLarge) or too small.
func sized[T any](old []T, n int) []T {
	if tooLarge(cap(old), n) {
		old = nil
	}
	return reuse.Zeroed(old, n)
}

// release leaves the engine's schedulers, its model's tables and its
// slot tables in its storage for the next run. The engine must not be used after.
func (e *engine) release() {
	st := e.store
	switch p := e.policy.(type) {
	case *regionPolicy:
		st.scheds = append(st.scheds, p.sched)
	case *jobsPolicy:
		st.scheds = p.appendSchedulers(st.scheds)
	}
	st.tasks, st.runs = e.model.tasks, e.model.runs
	st.slots, st.slotProfiles = e.slots, e.slotProfiles
	e.store, e.model = nil, nil
}
