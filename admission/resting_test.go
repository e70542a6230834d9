package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestRestPassesOverWaitingClaimants: on the queue-tree benchmark's
// cluster, busy in every queue, passes pass over most visits of jobs
// that wait for their claims (a job is visited again once what it has
// coming or its asks change, not by every pass), and decide the same:
// the same grants and slots asked back as the reference that visits
// them all. The visits are counted in the debug log ("job waits").
func TestRestPassesOverWaitingClaimants(t *testing.T) {
	run := func(visitAll bool) (s *sim, waits int) {
		s, cfg := benchTreeSim(t, 1000, 5, 1000)
		core, logs := observer.New(zap.DebugLevel)
		cfg.Logger = zap.New(core)
		s.start(cfg)
		s.q.visitAll = visitAll
		require.True(t, s.run(0), "all jobs finish")
		return s, logs.FilterMessage("job waits").Len()
	}
	s, waits := run(false)
	ref, refWaits := run(true)
	assert.Equal(t, ref.grants, s.grants)
	assert.Equal(t, ref.reclaims, s.reclaims)
	t.Logf("visits of waiting jobs: %d, every job visited: %d", waits, refWaits)
	assert.Less(t, waits*2, refWaits, "jobs at rest passed over")
}
