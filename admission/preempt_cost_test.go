package admission

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A waiting job of no higher priority than every job holding a slot has
// nothing to preempt, nor has one its queue holds back: a decision on a
// preempting queue asks preemptFor only about the others. 600 jobs wait
// on 64 slots of a queue that preempts. Of one priority, no job is asked
// about; of priorities 1 to 3, none on a priority queue (the higher ones
// run first) and about 15 per decision on a StateAware queue (its started
// jobs). Asking about every waiting job took 259 to 302 per decision.
// (On a FIFO queue of mixed priorities, every waiting job of higher
// priority than a running one may preempt it, and is asked about.)
func TestJobsWithNothingToPreemptCostNoLooks(t *testing.T) {
	for _, c := range []struct {
		qc     QueueConfig
		levels int
		most   float64
	}{
		{QueueConfig{Name: "root.default", Policy: Priority, Preempt: true}, 1, 0},
		{QueueConfig{Name: "root.default", Policy: FIFO, Preempt: true}, 1, 0},
		{QueueConfig{Name: "root.default", Policy: StateAware, Preempt: true}, 1, 0},
		{QueueConfig{Name: "root.default", Policy: Priority, Preempt: true}, 3, 0},
		{QueueConfig{Name: "root.default", Policy: StateAware, Preempt: true}, 3, 32},
	} {
		qc := c.qc
		t.Run(fmt.Sprintf("%v-levels%d", qc.Policy, c.levels), func(t *testing.T) {
			q := run600(t, qc, []int{1, 2, 1}, func(i int) JobSpec { return JobSpec{Priority: 1 + i*7%c.levels} })
			perDecision := float64(q.preemptLooks) / float64(q.decision)
			assert.LessOrEqual(t, perDecision, c.most, "jobs asked about per decision (%d in %d decisions)", q.preemptLooks, q.decision)
		})
	}
}
