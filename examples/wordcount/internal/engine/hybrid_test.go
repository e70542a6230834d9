package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/scheduler"
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
// once finished gets nothing until the winner is known and sealed, and
// then the winner's log, never that of an attempt that finished first
// but lost (its late finish was accepted and dropped by the scheduler).
func TestFinishedOnlyReadsTheWinnersLog(t *testing.T) {
	const p, c = scheduler.PartitionID(3), scheduler.TaskID(9)
	pub := newPublished(0)
	ref := finishedRef{pub: pub, p: p, consumer: c}

	pub.finished(0, sealedResult(p, c, "loser")) // sealed, but not named
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := readAll(t, ctx, ref)
	require.ErrorIs(t, err, context.Canceled, "nothing is read before the winner is named")

	pub.name(1, true) // Ready.Won: attempt 1 won
	select {
	case <-pub.ready:
		t.Fatal("published before the winner's logs were sealed")
	default:
	}
	pub.finished(1, sealedResult(p, c, "winner"))
	recs, err := readAll(t, context.Background(), ref)
	require.NoError(t, err)
	assert.Equal(t, []Record{{Key: "winner", N: 1}}, recs)

	pub.name(0, true) // nothing changes once published
	recs, err = readAll(t, context.Background(), ref)
	require.NoError(t, err)
	assert.Equal(t, []Record{{Key: "winner", N: 1}}, recs)
}

// TestFinishedOnlyWithoutARace: the region's attempt whose slot came back
// without a race is the winner; a Ready.Won before it is published
// overrides that guess (the region's attempt failed while a speculative
// one went on), and a guess never overrides a Ready.Won.
func TestFinishedOnlyWithoutARace(t *testing.T) {
	const p, c = scheduler.PartitionID(0), scheduler.TaskID(1)
	pub := newPublished(2)
	pub.name(2, false)
	pub.finished(2, sealedResult(p, c, "only"))
	recs, err := readAll(t, context.Background(), finishedRef{pub: pub, p: p, consumer: c})
	require.NoError(t, err)
	assert.Equal(t, []Record{{Key: "only", N: 1}}, recs)

	pub = newPublished(2)
	pub.name(2, false) // its slot came back: it failed, a speculative attempt runs on
	pub.name(3, true)
	pub.name(2, false)
	pub.finished(3, sealedResult(p, c, "copy"))
	recs, err = readAll(t, context.Background(), finishedRef{pub: pub, p: p, consumer: c})
	require.NoError(t, err)
	assert.Equal(t, []Record{{Key: "copy", N: 1}}, recs)
}
