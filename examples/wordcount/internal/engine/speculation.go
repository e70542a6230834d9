package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// Speculative execution (Config.Speculation). The scheduler deploys a
// speculative attempt of a slow task beside the task's attempt
// (Deployment.Speculative): it reads the same finished blocking inputs
// (or full hybrid ones, kept whole) and writes its blocking results under
// file names of its own attempt, with a partition record of its own, so
// nothing reads them yet. The first attempt to finish wins (Ready.Won):
// if it is the speculative one, its partition records take the place of
// the task's attempt's, so the consumers the scheduler deploys next read
// its files, and its records are the task's result; the other attempts
// come in Ready.Cancel and are stopped like any. Both attempts compute
// the same records from the same inputs, so a loser that finished first
// renames the same bytes into place.
//
// A task that may be speculated and writes full hybrid results has its
// consumers read them only once finished (scheduler.ReadsFinishedOnly):
// each of its attempts writes hybrid logs of its own, and its consumers,
// deployed as soon as its region's attempt is, wait for the logs of the
// attempt whose finish the scheduler accepted first, the winner, to be
// sealed and read only those (published in hybrid.go), never a loser's.

// speculation is an engine's speculative attempts and stragglers.
type speculation struct {
	// slow holds the Config.Slow stragglers not run yet: the first
	// attempt of each is held back this long.
	slow map[scheduler.TaskID]time.Duration
	// copies are the speculative attempts deployed and not ended or
	// canceled, with their partition records (Ready loop only).
	copies     map[scheduler.Task]*attempt
	partitions map[scheduler.Task]map[scheduler.PartitionID]*blockingResult
	// results holds what the attempts of sink tasks emitted (guarded by
	// the host's mutex).
	mu      sync.Mutex
	results map[scheduler.Task][]Record
}

// newSpeculation parses Config.Slow.
func newSpeculation(t *topology.ExecutionTopology, slow []string) (*speculation, error) {
	s := &speculation{slow: map[scheduler.TaskID]time.Duration{}, copies: map[scheduler.Task]*attempt{},
		partitions: map[scheduler.Task]map[scheduler.PartitionID]*blockingResult{}, results: map[scheduler.Task][]Record{}}
	for _, spec := range slow {
		at := strings.LastIndexByte(spec, '@')
		if at < 0 {
			return nil, fmt.Errorf("--slow %q: the form is ID#i@DURATION, e.g. counter#1@30s", spec)
		}
		v, err := t.ParseVertexName(spec[:at])
		if err != nil {
			return nil, fmt.Errorf("--slow %q: %w (the form is ID#i@DURATION, e.g. counter#1@30s)", spec, err)
		}
		d, err := time.ParseDuration(spec[at+1:])
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--slow %q: %q is not a positive Go duration (e.g. 30s, 500ms)", spec, spec[at+1:])
		}
		s.slow[v] = d
	}
	return s, nil
}

// straggles returns how long the attempt of task v now deployed is held
// back: the Config.Slow time for its first attempt, else 0.
func (s *speculation) straggles(v scheduler.TaskID) time.Duration {
	d, ok := s.slow[v]
	if ok {
		delete(s.slow, v)
	}
	return d
}

// add records a speculative attempt deployed.
func (s *speculation) add(a *attempt) { s.copies[scheduler.Task{Task: a.task, Attempt: a.attempt}] = a }

// copyOf returns the speculative attempt a Cancel names, nil if none
// runs, and forgets it.
func (s *speculation) copyOf(c scheduler.Task) *attempt {
	a := s.copies[c]
	delete(s.copies, c)
	delete(s.partitions, c)
	return a
}

// partition returns the record of partition p that speculative attempt a
// writes.
func (s *speculation) partition(a *attempt, p scheduler.PartitionID) *blockingResult {
	k := scheduler.Task{Task: a.task, Attempt: a.attempt}
	if s.partitions[k] == nil {
		s.partitions[k] = map[scheduler.PartitionID]*blockingResult{}
	}
	r := &blockingResult{attempt: a.attempt, done: make(chan struct{})}
	s.partitions[k][p] = r
	return r
}

// finished keeps what an attempt of a sink task emitted, for Won.
func (s *speculation) finished(a *attempt, records []Record) {
	s.mu.Lock()
	s.results[scheduler.Task{Task: a.task, Attempt: a.attempt}] = records
	s.mu.Unlock()
}

// won makes the winner of a race the task's attempt: its partition
// records, and its records if it is a sink. The Ready's Cancel, applied
// before, stopped the others. An error if the results of a task read only
// once finished were published from another attempt.
func (e *engine) won(w scheduler.Task) error {
	s := e.spec
	if pub := e.pubs[w.Task]; pub != nil {
		if got, ok := pub.published(); ok && got != w.Attempt {
			return fmt.Errorf("scheduler named %s attempt %d the winner, but attempt %d's finish was accepted first",
				e.topo.VertexName(w.Task), w.Attempt, got)
		}
	}
	for p, r := range s.partitions[w] {
		e.partitions[p] = r
	}
	delete(s.partitions, w)
	if a := s.copies[w]; a != nil {
		delete(s.copies, w)
		e.runs[w.Task] = a
	}
	s.mu.Lock()
	records, ok := s.results[w]
	for k := range s.results {
		if k.Task == w.Task {
			delete(s.results, k)
		}
	}
	s.mu.Unlock()
	if ok {
		e.h.mu.Lock()
		e.outputs[w.Task] = taskOutput{attempt: w.Attempt, records: records}
		e.h.mu.Unlock()
	}
	return nil
}
