package pool

import (
	"time"

	"github.com/regionsched/regionsched/slotpool"
	"go.uber.org/zap"
)

// Link couples a Pool with an in-process Admission: it is the one place
// that carries messages between them and the one place that merges their
// deadlines. Without an admission (nil) it passes the pool's events
// through, the ToAdmission messages included, for the caller to carry to
// an admission elsewhere and to answer with Pool.Admit.
//
// Like the pool, a Link has no goroutines and no clock.
type Link struct {
	pool *Pool
	adm  slotpool.Admission
	log  *zap.Logger
	// out is what Notes returned last; spare the storage of the events
	// it took from the pool last, which the pool fills next.
	out, spare []Note
}

// NewLink couples p with a (nil: no in-process admission). A nil logger
// means zap.NewNop().
func NewLink(p *Pool, a slotpool.Admission, log *zap.Logger) *Link {
	if log == nil {
		log = zap.NewNop()
	}
	return &Link{pool: p, adm: a, log: log}
}

// Pool returns the linked pool.
func (l *Link) Pool() *Pool { return l.pool }

// Admission returns the in-process admission, or nil.
func (l *Link) Admission() slotpool.Admission { return l.adm }

// Ready carries messages between the pool and the admission until both are
// quiet and returns the pool's other events (Fulfilled, Failed, Lost), in
// the order they happened. Without an admission every event of the pool is
// returned. A message one side rejects is logged and dropped: it is a
// protocol error of the other side, and neither state changed.
//
// The caller owns the returned slice. Notes returns the same events
// without boxing them.
func (l *Link) Ready(now time.Time) []Event { return events(l.Notes(now)) }

// Notes is Ready with the events as Notes: a Fulfilled, the usual event,
// costs no allocation. The returned slice is valid until the next call of
// Notes or Ready.
func (l *Link) Notes(now time.Time) []Note {
	if l.adm == nil {
		// The pool's events as they are; the pool fills the slice returned
		// last time next.
		l.out = l.pool.swapEvents(l.out)
		return l.out
	}
	clear(l.out)
	l.out = l.out[:0]
	for {
		events := l.pool.swapEvents(l.spare)
		l.spare = events
		for _, ev := range events {
			if m, ok := ev.Other.(slotpool.ToAdmission); ok {
				if err := l.adm.Handle(now, m); err != nil {
					l.log.Warn("admission rejected a message of the pool", zap.Error(err))
				}
				continue
			}
			l.out = append(l.out, ev)
		}
		msgs := l.adm.Ready()
		if len(events) == 0 && len(msgs) == 0 {
			return l.out
		}
		for _, m := range msgs {
			if err := l.pool.Admit(now, m); err != nil {
				l.log.Warn("pool rejected a message of the admission", zap.Error(err))
			}
		}
	}
}

// Tick fires the timers of both sides due at now; Ready then returns what
// followed.
func (l *Link) Tick(now time.Time) {
	if l.adm != nil {
		l.adm.Tick(now)
	}
	l.pool.Tick(now)
}

// NextDeadline returns the earlier of the pool's and the admission's next
// deadlines.
func (l *Link) NextDeadline() (time.Time, bool) {
	t, ok := l.pool.NextDeadline()
	if l.adm != nil {
		if at, aok := l.adm.NextDeadline(); aok && (!ok || at.Before(t)) {
			t, ok = at, true
		}
	}
	return t, ok
}
