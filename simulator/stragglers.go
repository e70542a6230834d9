package simulator

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/regionsched/regionsched/topology"
)

// DefaultStragglerFactor is how many times slower a straggler runs when
// Config.StragglerFactor is 0.
const DefaultStragglerFactor = 10

// MaxStragglerFactor bounds Config.StragglerFactor.
const MaxStragglerFactor = 1000

// ErrBadStragglers means Config.Stragglers or Config.StragglerFactor is
// out of range.
var ErrBadStragglers = errors.New("simulator: invalid straggler model")

// The straggler model (Config.Stragglers): each attempt of a task is a
// straggler with probability Stragglers, drawn from the seed, the task
// and which of its attempts it is, and then takes StragglerFactor times
// its duration. The k-th run of a task in its regions (deployments by the
// regions, restarts included) and its k-th speculative attempt draw
// apart, so a run with speculation and the same run without it have the
// same stragglers among the runs both make.

// Salts of the two kinds of attempts in the straggler draw.
const (
	saltFirst       = 0x9e3779b97f4a7c15
	saltSpeculative = 0xc2b2ae3d27d4eb4f
)

// straggles reports whether the n-th attempt of task v of the given kind
// (salt) is a straggler.
func (e *engine) straggles(v int32, n uint32, salt uint64) bool {
	p := e.cfg.Stragglers
	if p <= 0 {
		return false
	}
	x := e.cfg.Seed ^ salt ^ uint64(uint32(v))<<32 ^ uint64(n)
	// splitmix64's finalizer: every bit of the input moves the output.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < p
}

// initStragglers sets up the straggler model of a run, if any.
func (e *engine) initStragglers() {
	if e.cfg.Stragglers <= 0 {
		return
	}
	n := e.topo.NumExecutionVertices()
	e.model.slow = make([]bool, n)
	e.model.factor = stragglerFactor(e.cfg)
	e.firstRuns = make([]uint32, n)
}

// firstStraggles draws whether the region's attempt of task v now
// deployed is a straggler.
func (e *engine) firstStraggles(v int32) {
	slow := e.straggles(v, e.firstRuns[v], saltFirst)
	e.firstRuns[v]++
	e.model.slow[v] = slow
	if slow {
		e.stragglers++
	}
}

// stragglerFactor is the run's factor (the default for 0).
func stragglerFactor(cfg Config) float64 {
	if cfg.StragglerFactor == 0 {
		return DefaultStragglerFactor
	}
	return cfg.StragglerFactor
}

// scaled is d times f, capped far from overflow.
func scaled(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return time.Duration(x)
}

// checkStragglers rejects a straggler model out of range, and one whose
// slow attempts could run longer than virtual time holds.
func checkStragglers(cfg Config) error {
	switch {
	case !(cfg.Stragglers >= 0 && cfg.Stragglers <= 1):
		return fmt.Errorf("%w: stragglers %g: a share of attempts, 0 ... 1", ErrBadStragglers, cfg.Stragglers)
	case cfg.StragglerFactor != 0 && !(cfg.StragglerFactor >= 1 && cfg.StragglerFactor <= MaxStragglerFactor):
		return fmt.Errorf("%w: straggler factor %g: 1 ... %d (0: %d)", ErrBadStragglers, cfg.StragglerFactor,
			MaxStragglerFactor, DefaultStragglerFactor)
	}
	if cfg.Stragglers == 0 {
		return nil
	}
	// As checkHorizon, with every attempt a straggler and a speculative
	// attempt beside each.
	const horizon = time.Duration(1 << 61)
	f := stragglerFactor(cfg)
	job := cfg.Regions.Topology().Job()
	total := 0.0
	for jv := range topology.JobVertexID(job.NumVertices()) {
		if vx := job.Vertex(jv); !vx.Unbounded {
			total += 4 * float64(vx.Parallelism) * float64(vx.Duration) * f
		}
	}
	if total >= float64(horizon) {
		return fmt.Errorf("%w: with straggler factor %g the job's tasks may take more than the about 73 years of virtual time a run may last",
			ErrTooLong, f)
	}
	return nil
}
