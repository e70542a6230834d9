package simulator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/simulator"
)

// endsOutOfDeployOrder counts the pairs of tasks that finish at the same
// time in the other order than they were deployed.
func endsOutOfDeployOrder(t *testing.T, events []runfile.Event) int {
	t.Helper()
	deployed := map[string]int{} // task -> position among the deploys of its attempt
	var finished []runfile.Event
	for _, ev := range events {
		switch ev.Kind {
		case runfile.Deploy:
			deployed[ev.Task] = len(deployed)
		case runfile.Finish:
			finished = append(finished, ev)
		}
	}
	out := 0
	for i := 1; i < len(finished); i++ {
		a, b := finished[i-1], finished[i]
		if a.At == b.At && deployed[a.Task] > deployed[b.Task] {
			out++
		}
	}
	return out
}

// With ties in order (the default) the tasks of a wave end in the order
// they were deployed, under every seed; with seeded ties, seeds end them
// in other orders. Either way the run is the same job: the same makespan
// and verdict.
func TestTiesInOrderEndAWaveAsDeployed(t *testing.T) {
	rs := region.FromJob(chains(t, 3, 40), exchange.AllBlocking)
	seededOutOfOrder := 0
	for seed := uint64(1); seed <= 5; seed++ {
		inOrder := run(t, simulator.Config{Regions: rs, Cluster: slots(10), Seed: seed, Record: true})
		require.Equal(t, runfile.Finished, inOrder.Verdict)
		assert.Zero(t, endsOutOfDeployOrder(t, inOrder.Events), "seed %d", seed)

		seeded := run(t, simulator.Config{Regions: rs, Cluster: slots(10), Seed: seed, Ties: simulator.TiesSeeded, Record: true})
		require.Equal(t, runfile.Finished, seeded.Verdict)
		assert.Equal(t, inOrder.Makespan, seeded.Makespan, "seed %d", seed)
		seededOutOfOrder += endsOutOfDeployOrder(t, seeded.Events)
	}
	assert.Positive(t, seededOutOfOrder, "seeded ties end waves out of deploy order")
}

// A Ties value that is none of the constants is refused, by Run and by
// RunJobs, and names the valid ones; the constants print as the CLI
// spells them.
func TestTiesRefusesAnUnknownValue(t *testing.T) {
	rs := region.FromJob(flip119(t), exchange.AllBlocking)
	_, err := simulator.Run(simulator.Config{Regions: rs, Cluster: slots(2), Ties: 7})
	require.ErrorIs(t, err, simulator.ErrUnknownTieOrder)
	assert.Contains(t, err.Error(), "valid: TiesInOrder, TiesSeeded")
	_, _, err = simulator.RunJobs(simulator.JobsConfig{Jobs: []runfile.Job{{Name: "flip", Job: flip119(t)}}, Cluster: slots(2), Ties: 9})
	require.ErrorIs(t, err, simulator.ErrUnknownTieOrder)

	for _, tie := range []simulator.TieOrder{simulator.TiesInOrder, simulator.TiesSeeded} {
		parsed, err := simulator.ParseTieOrder(tie.String())
		require.NoError(t, err)
		assert.Equal(t, tie, parsed)
	}
	assert.Equal(t, "TieOrder(7)", simulator.TieOrder(7).String())
	_, err = simulator.ParseTieOrder("random")
	assert.ErrorIs(t, err, simulator.ErrUnknownTieOrder)
}
