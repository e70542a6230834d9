package engine

import (
	"context"
	"sync"

	"github.com/regionsched/regionsched/scheduler"
)

// hybridResult is one attempt of a hybrid result partition: one log per
// consumer subtask of its partition group, which the producer appends to
// and each consumer reads while it grows. The Ready loop registers it
// when the producer is deployed (a consumer is deployed only once its
// producers are) and forgets it when the scheduler releases the
// partition or the producer runs again.
type hybridResult struct {
	attempt scheduler.Attempt
	logs    map[scheduler.TaskID]*hybridLog
}

// hybridLog is the records one producer attempt sends one consumer over a
// hybrid exchange, kept whole (full spilling): a consumer reads it from
// the start, records written before it was deployed included, and a
// consumer that runs again reads it all again. The producer never waits
// for its reader. It is sealed once the scheduler accepted the producer's
// finish, so that a consumer never reports its own finish first.
type hybridLog struct {
	mu     sync.Mutex
	recs   []Record
	sealed bool
	wake   chan struct{} // closed when records are added or the log is sealed; nil while nobody waits
}

func (l *hybridLog) add(rec Record) {
	l.mu.Lock()
	l.recs = append(l.recs, rec)
	l.signal()
	l.mu.Unlock()
}

// seal marks the end of the producer's records.
func (l *hybridLog) seal() {
	l.mu.Lock()
	l.sealed = true
	l.signal()
	l.mu.Unlock()
}

// signal wakes the reader waiting for more (l.mu held).
func (l *hybridLog) signal() {
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// read sends every record of the log from its start, waiting for more
// until the log is sealed.
func (l *hybridLog) read(ctx context.Context, out chan<- Record) error {
	next := 0
	for {
		l.mu.Lock()
		batch := l.recs[next:len(l.recs):len(l.recs)] // records are never changed once added
		sealed := l.sealed
		var wait chan struct{}
		if len(batch) == 0 && !sealed {
			if l.wake == nil {
				l.wake = make(chan struct{})
			}
			wait = l.wake
		}
		l.mu.Unlock()
		if len(batch) == 0 {
			if sealed {
				return nil
			}
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		for _, rec := range batch {
			select {
			case out <- rec:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		next += len(batch)
	}
}

// logTarget is a producer's end of a hybrid log.
type logTarget struct{ log *hybridLog }

func (t logTarget) send(_ context.Context, rec Record) error {
	t.log.add(rec)
	return nil
}

// close does nothing: the log is sealed once the producer's finish was
// accepted (output.seal).
func (t logTarget) close(context.Context) error { return nil }

// discard does nothing: a producer that runs again writes new logs, and
// the consumers of the old ones are restarted with it.
func (t logTarget) discard() {}

// logInput is a consumer's hybrid input on one edge: the logs its
// partition group's producers write for it, read side by side (live, or
// the winners' once sealed).
type logInput struct{ logs []logSource }

func (in logInput) read(ctx context.Context, out chan<- Record) error {
	errs := make(chan error, len(in.logs))
	for _, l := range in.logs {
		go func() { errs <- l.read(ctx, out) }()
	}
	var first error
	for range in.logs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// logSource is one producer's records for a consumer on a hybrid edge:
// its log, read live, or the log of the attempt of it that won, read once
// sealed (finishedRef).
type logSource interface {
	read(ctx context.Context, out chan<- Record) error
}

// published is one region attempt of a task whose hybrid results its
// consumers read only once finished (scheduler.ReadsFinishedOnly: the
// task may get speculative attempts). Each attempt of the task, its
// speculative ones included, writes hybrid logs of its own; the consumers
// read those of the attempt that won, once the scheduler accepted its
// finish and it sealed them, and never those of an attempt that lost.
// The scheduler makes the first finish it accepts the winner (a loser's
// late finish is accepted too, and dropped): an attempt holds reporting
// from its finish report until it handed its results in, so the first
// results handed in are the winner's. (Ready.Won, which names the winner
// of a race, is checked against them.) The Ready loop registers it when
// the task's region attempt is deployed, and replaces it when the task
// runs again.
type published struct {
	attempt   scheduler.Attempt // the region's attempt
	ready     chan struct{}     // closed once won holds the winner's results
	reporting sync.Mutex

	mu     sync.Mutex
	winner scheduler.Attempt                       // -1 while not known
	won    map[scheduler.PartitionID]*hybridResult // read only after ready is closed
}

func newPublished(attempt scheduler.Attempt) *published {
	return &published{attempt: attempt, ready: make(chan struct{}), winner: -1}
}

// finished hands in the sealed results of an attempt whose finish the
// scheduler accepted (reporting held since before the report): the first
// are the winner's, and are published; later ones are a loser's.
func (p *published) finished(attempt scheduler.Attempt, results map[scheduler.PartitionID]*hybridResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.winner >= 0 {
		return
	}
	p.winner, p.won = attempt, results
	close(p.ready)
}

// published returns the attempt whose results are published, if any.
func (p *published) published() (scheduler.Attempt, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.winner, p.winner >= 0
}

// finishedRef is a consumer's read of one finished-only hybrid result:
// partition p of the task whose region attempt pub is.
type finishedRef struct {
	pub      *published
	p        scheduler.PartitionID
	consumer scheduler.TaskID
}

// read waits for the winner's logs and sends the consumer's one, sealed,
// from its start.
func (f finishedRef) read(ctx context.Context, out chan<- Record) error {
	select {
	case <-f.pub.ready:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return f.pub.won[f.p].logs[f.consumer].read(ctx, out)
}
