package engine

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// host is what the jobs of one run share: the local slots, the clock and
// the start of the run, the directory of blocking results, the task
// goroutines and the first fatal error. Each job has its own engine on it.
type host struct {
	clk   clock.Clock
	start time.Time
	dir   string
	// ctx is the parent of every attempt's context.
	ctx context.Context

	wg    sync.WaitGroup // the attempts' goroutines, of every job
	fatal chan error     // the first error of a task goroutine

	// mu guards what task goroutines share with the Ready loop: the slots
	// and each engine's timeline and outputs.
	mu    sync.Mutex
	slots *slotTable
}

// newHost makes the temporary directory of a run (under tempDir, "" for
// os.TempDir()) and the host of n slots. The caller removes h.dir.
func newHost(ctx context.Context, clk clock.Clock, n int, tempDir string) (*host, error) {
	dir, err := os.MkdirTemp(tempDir, "wordcount-")
	if err != nil {
		return nil, err
	}
	return &host{clk: clk, start: clk.Now(), dir: dir, ctx: ctx, fatal: make(chan error, 1), slots: newSlotTable(n)}, nil
}

// since returns the time since the start of the run.
func (h *host) since() time.Duration { return h.clk.Since(h.start) }

// abort records the first fatal error of a task goroutine; the Ready loop
// returns it.
func (h *host) abort(err error) {
	select {
	case h.fatal <- err:
	default:
	}
}
