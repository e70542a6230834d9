package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/topology"
)

// sealedResult is an attempt's hybrid result of partition p for
// consumer c, one record with key, sealed.
func sealedResult(p scheduler.PartitionID, c scheduler.TaskID, key string) map[scheduler.PartitionID]*hybridResult {
	l := &hybridLog{}
	l.add(Record{Key: key, N: 1})
	l.seal()
	return map[scheduler.PartitionID]*hybridResult{p: {logs: map[scheduler.TaskID]*hybridLog{c: l}}}
}

// readAll reads src to its end into a slice.
func readAll(t *testing.T, ctx context.Context, src logSource) ([]Record, error) {
	t.Helper()
	out := make(chan Record, 16)
	err := src.read(ctx, out)
	close(out)
	var recs []Record
	for r := range out {
		recs = append(recs, r)
	}
	return recs, err
}

// TestFinishedOnlyReadsTheWinnersLog: a consumer of a result read only
// once finished gets nothing until an attempt whose finish the scheduler
// accepted handed in its sealed logs, and then that attempt's log, the
// winner's: a loser whose late finish is accepted (and dropped) after it
// changes nothing.
func TestFinishedOnlyReadsTheWinnersLog(t *testing.T) {
	const p, c = scheduler.PartitionID(3), scheduler.TaskID(9)
	pub := newPublished(0)
	ref := finishedRef{pub: pub, p: p, consumer: c}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := readAll(t, ctx, ref)
	require.ErrorIs(t, err, context.Canceled, "nothing is read before the winner's logs are in")
	_, ok := pub.published()
	assert.False(t, ok)

	pub.finished(1, sealedResult(p, c, "winner")) // the speculative attempt 1 won
	pub.finished(0, sealedResult(p, c, "loser"))  // the straggler's late finish
	recs, err := readAll(t, context.Background(), ref)
	require.NoError(t, err)
	assert.Equal(t, []Record{{Key: "winner", N: 1}}, recs)
	got, ok := pub.published()
	assert.True(t, ok)
	assert.Equal(t, scheduler.Attempt(1), got)
}

// TestWonIsCheckedAgainstThePublishedWinner: a Ready.Won naming another
// attempt than the one whose results were published is a broken promise
// of the scheduler, an error; naming it, or coming before any result was
// handed in, is fine.
func TestWonIsCheckedAgainstThePublishedWinner(t *testing.T) {
	e := &engine{pubs: map[scheduler.TaskID]*published{}, spec: &speculation{copies: map[scheduler.Task]*attempt{},
		partitions: map[scheduler.Task]map[scheduler.PartitionID]*blockingResult{}, results: map[scheduler.Task][]Record{}}}
	job, err := topology.NewBuilder("two").
		AddVertex(topology.JobVertex{ID: "A", Parallelism: 1}).
		AddVertex(topology.JobVertex{ID: "B", Parallelism: 1}).
		Connect("A", "B", exchange.Hash).Build()
	require.NoError(t, err)
	e.topo = region.FromJob(job, exchange.AllHybridFull).Topology()
	pub := newPublished(0)
	e.pubs[0] = pub
	require.NoError(t, e.won(scheduler.Task{Task: 0, Attempt: 1}), "before any result was handed in")
	pub.finished(1, sealedResult(0, 1, "winner"))
	require.NoError(t, e.won(scheduler.Task{Task: 0, Attempt: 1}))
	err = e.won(scheduler.Task{Task: 0, Attempt: 0})
	require.Error(t, err)
	assert.Equal(t, "scheduler named A#0 attempt 0 the winner, but attempt 1's finish was accepted first", err.Error())
}
