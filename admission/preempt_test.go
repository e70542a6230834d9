package admission

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reclaim with reclaim timeouts (docs/job-file.md): a high-priority job
// arrives while a low-priority job holds every slot with a long region.
// With a timeout of 0 the low job's tasks are cancelled at once and the
// high job deploys at its arrival; with a positive timeout the
// cancellation waits that long; without preemption the high job waits
// for the region to end. The low job finishes in every case.
func TestPreemptionWithReclaimTimeouts(t *testing.T) {
	for _, c := range []struct {
		name    string
		preempt bool
		timeout time.Duration
		deploy  time.Duration // of the high job
		lost    int           // regions of the low job lost
	}{
		{"timeout0", true, 0, 10 * ms, 1},
		{"timeout100ms", true, 100 * ms, 110 * ms, 1},
		{"never", false, 0, 1000 * ms, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, Config{Slots: clusterSlots(4), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: c.preempt, ReclaimTimeout: c.timeout}}},
				simConfig{checks: true, record: true})
			low := s.add(JobSpec{Name: "low", Priority: 1000}, 0, []int{4}, []time.Duration{1000 * ms}, 1, 0)
			high := s.add(JobSpec{Name: "high", Priority: 9000}, 10*ms, []int{4}, []time.Duration{10 * ms}, 1, 0)
			require.True(t, s.run(0), s.tail(30))
			assert.Equal(t, c.deploy, high.firstDeploy.Sub(t0), s.tail(30))
			assert.Equal(t, c.lost, low.lost)
			assert.Equal(t, JobCompleted, low.port.State())
			if c.lost > 0 {
				assert.Equal(t, c.deploy+10*ms+1000*ms, low.finished.Sub(t0), "the low job's region runs again after the high job")
			}
		})
	}
}

// A job never preempts one of equal priority, nor a driver: the claim
// waits for the slots to come back.
func TestNoPreemptionOfEqualPriorityOrDrivers(t *testing.T) {
	drv := small
	s := newSim(t, Config{Slots: clusterSlots(3), Queues: []QueueConfig{{Name: "root.default", Policy: Priority, Preempt: true}}},
		simConfig{checks: true, record: true})
	first := s.add(JobSpec{Name: "first", Priority: 5000, Driver: &drv}, 0, []int{2}, []time.Duration{500 * ms}, 1, 0)
	second := s.add(JobSpec{Name: "second", Priority: 5000}, 10*ms, []int{3}, []time.Duration{10 * ms}, 1, 0)
	require.True(t, s.run(0), s.tail(30))
	assert.Zero(t, first.lost)
	assert.Equal(t, 500*ms, second.firstDeploy.Sub(t0).Round(ms), "waits for the region, then the driver's slot with the job's end")
	_ = second
}
