package slurm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// A region that asked and restarted within one Ready (every input of an
// instant is applied before it) no longer waits: its request is
// withdrawn right after it is traced, as in the simulator's trace and on
// Kubernetes. A region that waits again by the time the runner looks
// (it asked for another attempt) keeps its request open: the next
// attempt's request withdraws it. (v2#0 is a region of its own.)
func TestRunWithdrawsARequestItsReadyRestarted(t *testing.T) {
	g, err := topology.DecodeBytes([]byte(`{"vertices":[{"id":"v0","parallelism":1},{"id":"v2","parallelism":2}],
		"edges":[{"source":"v0","target":"v2","shipStrategy":"rebalance","exchange":"blocking"}]}`))
	require.NoError(t, err)
	for _, c := range []struct {
		name      string
		waits     bool
		want      []string
		wantAsked int
	}{
		{"no longer waits", false, []string{"request v2#0@0", "withdraw v2#0@0"}, 0},
		{"waits again", true, []string{"request v2#0@0"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var trace []string
			r := newRun(RunConfig{Trace: func(ev runfile.Event) { trace = append(trace, fmt.Sprintf("%s %s@%d", ev.Kind, ev.Task, ev.Attempt)) }},
				[]runfile.Job{{Name: "s", Job: g}})
			jr := r.jobs["s"]
			v20, err := jr.rs.Topology().ParseVertexName("v2#0")
			require.NoError(t, err)
			reg := jr.rs.RegionOf(v20)
			rd := scheduler.Ready{
				Requests:  []scheduler.Request{{Region: reg, Attempt: 0, Slots: jr.rs.Slots(reg)}},
				Restarted: []scheduler.Restart{{Regions: []scheduler.RegionID{reg}}},
			}
			for _, s := range rd.Requests[0].Slots {
				for _, v := range s.Members {
					r.request("s", jr, v, 0, false)
				}
			}
			var waiting []scheduler.RegionID
			if c.waits {
				waiting = []scheduler.RegionID{reg}
			}
			r.withdrawEnded("s", jr, &rd, waiting)
			assert.Equal(t, c.want, trace)
			assert.Len(t, jr.asked, c.wantAsked)
		})
	}
}
