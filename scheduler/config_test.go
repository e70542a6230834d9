package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// TestConfigCheck: a Config that contradicts itself is refused, by Check
// and by the scheduler New makes of it (every input returns the same
// *ConfigError, nothing panics); every other
// combination of the admission settings is accepted.
func TestConfigCheck(t *testing.T) {
	cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension, slotpool.Slots(1)...)
	require.NoError(t, err)
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	for _, c := range []struct {
		name  string
		cfg   Config
		field string // "": accepted
	}{
		{"no admission", Config{}, ""},
		{"in process", Config{Admission: cluster}, ""},
		{"external", Config{ExternalAdmission: true}, ""},
		{"in process, freed slots returned", Config{Admission: cluster, Pool: slotpool.Config{ReturnFreed: true}}, ""},
		{"external, freed slots returned", Config{ExternalAdmission: true, Pool: slotpool.Config{ReturnFreed: true}}, ""},
		{"in process and external", Config{Admission: cluster, ExternalAdmission: true}, "ExternalAdmission"},
		{"freed slots returned to no admission", Config{Pool: slotpool.Config{ReturnFreed: true}}, "Pool.ReturnFreed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Check()
			if c.field == "" {
				assert.NoError(t, err)
				assert.NoError(t, New(rs, c.cfg).Start(t0))
				return
			}
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.field, ce.Field)
			assert.ErrorIs(t, err, ErrInvalidConfig)
			var s *Scheduler
			require.NotPanics(t, func() { s = New(rs, c.cfg) })
			assert.Equal(t, err, s.Start(t0), "Start refuses it")
			assert.Equal(t, err, s.Tick(t0), "and every input")
			assert.False(t, s.HasReady())
		})
	}
}

// TestPoolAsksOnlyWithAnAdmission: a region that waits for slots asks an
// admission for them exactly when the scheduler has one; without, nothing
// comes out for an admission.
func TestPoolAsksOnlyWithAnAdmission(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	now := time.Unix(0, 0)
	for _, external := range []bool{false, true} {
		s := New(rs, Config{ExternalAdmission: external})
		require.NoError(t, s.Start(now))
		rd := s.Ready()
		asks := 0
		for _, m := range rd.ToAdmission {
			if _, ok := m.(slotpool.Ask); ok {
				asks++
			} else {
				t.Errorf("external %v: unexpected %T", external, m)
			}
		}
		if external {
			assert.Equal(t, len(rd.Requests), asks, "one ask per region waiting")
		} else {
			assert.Zero(t, asks)
		}
		assert.NotEmpty(t, rd.Requests)
	}
}
