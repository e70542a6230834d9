package scheduler_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/internal/scenario"
	"github.com/regionsched/regionsched/scheduler"
)

// cmdSpeculation turns speculative execution on: Flink's defaults, with
// the knobs the command gives.
func (h *harness) cmdSpeculation(t *testing.T, td *datadriven.TestData) string {
	if h.s != nil {
		td.Fatalf(t, "speculation after the scheduler was created")
	}
	c := scheduler.DefaultSpeculation()
	ms := func(key string, d *time.Duration) {
		if td.HasArg(key) {
			*d = time.Duration(scenario.Int(t, td, key)) * time.Millisecond
		}
	}
	float := func(key string, f *float64) {
		if td.HasArg(key) {
			var s string
			td.ScanArgs(t, key, &s)
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				td.Fatalf(t, "%s=%s: %v", key, s, err)
			}
			*f = x
		}
	}
	float("ratio", &c.BaselineRatio)
	float("multiplier", &c.BaselineMultiplier)
	ms("lower-bound", &c.BaselineLowerBound)
	ms("interval", &c.CheckInterval)
	ms("block", &c.BlockSlowNodeDuration)
	if td.HasArg("max") {
		c.MaxConcurrentExecutions = scenario.Int(t, td, "max")
	}
	h.cfg.Speculation = c
	return fmt.Sprintf("speculation: ratio %g, multiplier %g, lower bound %v, every %v, at most %d attempts, slow nodes blocked for %v",
		c.BaselineRatio, c.BaselineMultiplier, c.BaselineLowerBound, c.CheckInterval, c.MaxConcurrentExecutions, c.BlockSlowNodeDuration)
}

func (h *harness) cmdSpeculationStats(t *testing.T, td *datadriven.TestData) string {
	st := h.sched(t, td).SpeculationStats()
	return fmt.Sprintf("requested %d, started %d, won %d, %d blocked", st.Requested, st.Started, st.Won, st.Blocked)
}

// cmdSpeculable prints the speculable tasks and the results read only
// once finished, in id order.
func (h *harness) cmdSpeculable(t *testing.T, td *datadriven.TestData) string {
	s := h.sched(t, td)
	topo := h.rs.Topology()
	var tasks, parts []string
	for v := range scheduler.TaskID(topo.NumExecutionVertices()) {
		if s.Speculable(v) {
			tasks = append(tasks, h.name(v))
		}
	}
	for p := range scheduler.PartitionID(topo.NumPartitions()) {
		if s.ReadsFinishedOnly(p) {
			parts = append(parts, h.partitionName(p))
		}
	}
	return fmt.Sprintf("speculable: [%s]\nread finished only: [%s]", strings.Join(tasks, " "), strings.Join(parts, " "))
}

// speculative is the mark of a speculative request or deployment.
func speculative(yes bool) string {
	if yes {
		return " speculative"
	}
	return ""
}
