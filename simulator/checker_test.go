package simulator_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

// The trace checker rejects corrupted traces: the invariants the other
// tests rely on are not vacuous.
func TestCheckTraceCatchesCorruption(t *testing.T) {
	index := func(evs []runfile.Event, f func(runfile.Event) bool) int {
		i := slices.IndexFunc(evs, f)
		require.GreaterOrEqual(t, i, 0)
		return i
	}
	is := func(k runfile.Kind, task string) func(runfile.Event) bool {
		return func(ev runfile.Event) bool { return ev.Kind == k && ev.Task == task }
	}
	for _, tc := range []struct {
		name    string
		mode    exchange.Mode
		slots   int
		corrupt func([]runfile.Event) []runfile.Event
		want    string
	}{
		{"time order", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Release, "A#0"))
			evs[i].At = 0
			return evs
		}, "time order"},
		{"deploy without request", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Request, "B#1"))
			return slices.Delete(evs, i, i+1)
		}, "without a request"},
		{"missing release", exchange.AllBlocking, 2, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Release, "D#2"))
			return slices.Delete(evs, i, i+1)
		}, "without a release"},
		{"release of a busy slot", exchange.AllPipelined, 4, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Deploy, "D#0"))
			rel := evs[i]
			rel.Kind = runfile.Release
			return slices.Insert(evs, i+1, rel)
		}, "did not become empty"},
		{"region split in time", exchange.PointwisePipelinedOnly, 2, func(evs []runfile.Event) []runfile.Event {
			for i := range evs {
				if evs[i].Task == "C#1" && evs[i].Kind == runfile.Deploy {
					evs[i].At += time.Millisecond
				}
			}
			return evs
		}, "deployed at"},
		{"blocking input not finished", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Finish, "C#3"))
			evs[i].Kind = runfile.Cancel
			return evs
		}, "finished its blocking partition"},
		{"two regions in a slot", exchange.AllBlocking, 2, func(evs []runfile.Event) []runfile.Event {
			a := index(evs, is(runfile.Deploy, "A#0"))
			b := index(evs, is(runfile.Deploy, "A#1"))
			evs[b].Slot = evs[a].Slot
			return evs
		}, "held by region"},
		{"close of another attempt", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Finish, "A#0"))
			evs[i].Attempt = 3
			return evs
		}, "open deploy is attempt"},
		{"close without deploy", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Finish, "B#0"))
			ev := evs[i]
			ev.Task, ev.Region = "D#0", int(region.FromJob(flip119(t), exchange.AllBlocking).RegionOf(8))
			return slices.Insert(evs, i, ev)
		}, "closes no open deploy"},
		{"finish too early", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			// The deploy 10 ms later, where that time comes in the trace.
			i := index(evs, is(runfile.Deploy, "A#1"))
			ev := evs[i]
			ev.At += 10 * time.Millisecond
			evs = slices.Delete(evs, i, i+1)
			j := i
			for j < len(evs) && evs[j].At <= ev.At {
				j++
			}
			return slices.Insert(evs, j, ev)
		}, "its duration is"},
		{"slot out of range", exchange.AllBlocking, 1, func(evs []runfile.Event) []runfile.Event {
			i := index(evs, is(runfile.Deploy, "A#0"))
			evs[i].Slot = 1
			return evs
		}, "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := region.FromJob(flip119(t), tc.mode)
			res := run(t, simulator.Config{Regions: rs, Cluster: slots(tc.slots), Seed: 1, Record: true})
			require.Equal(t, runfile.Finished, res.Verdict)
			_, err := checkTrace(rs, slots(tc.slots), simulator.RegionPolicy, res)
			require.NoError(t, err)
			res.Events = tc.corrupt(slices.Clone(res.Events))
			_, err = checkTrace(rs, slots(tc.slots), simulator.RegionPolicy, res)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
