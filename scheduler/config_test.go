package scheduler

import (
	"errors"
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

// TestConfigValidate: a Config that contradicts itself or sets a value
// out of range is refused, by Validate and by New (the same error, no
// scheduler, nothing panics); every other combination of the admission
// settings is accepted.
func TestConfigValidate(t *testing.T) {
	cluster, err := admission.NewStaticCluster(resource.FitsEveryDimension, slotpool.Slots(1)...)
	require.NoError(t, err)
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	badSpec := DefaultSpeculation()
	badSpec.BaselineRatio = 2
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
		{"selective share 1", Config{SelectiveShare: 1}, ""},
		{"in process and external", Config{Admission: cluster, ExternalAdmission: true}, "ExternalAdmission"},
		{"freed slots returned to no admission", Config{Pool: slotpool.Config{ReturnFreed: true}}, "Pool.ReturnFreed"},
		{"selective share above 1", Config{SelectiveShare: 1.5}, "SelectiveShare"},
		{"negative selective share", Config{SelectiveShare: -0.5}, "SelectiveShare"},
		{"speculation out of range", Config{Speculation: badSpec}, "BaselineRatio"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.field == "" {
				assert.NoError(t, err)
				s, err := New(rs, c.cfg)
				require.NoError(t, err)
				assert.NoError(t, s.Start(t0))
				return
			}
			assert.ErrorIs(t, err, ErrInvalidConfig)
			var ce *ConfigError
			var se *SpeculationError
			switch {
			case errors.As(err, &ce):
				assert.Equal(t, c.field, ce.Field)
			case errors.As(err, &se):
				assert.Equal(t, c.field, se.Field)
			default:
				t.Fatalf("%T %v", err, err)
			}
			var s *Scheduler
			var nerr error
			require.NotPanics(t, func() { s, nerr = New(rs, c.cfg) })
			assert.Equal(t, err, nerr, "New returns it")
			assert.Nil(t, s)
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
		s := mustNew(t, rs, Config{ExternalAdmission: external})
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
