package pool

import (
	"math/rand/v2"
	"testing"

	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// denseTable against a map, through its list, its chunks and its map
// (keys below denseLimit, spread over several chunks, negative and
// beyond the limit), on tables that stay small and tables that grow.
func TestDenseTableMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	keyRanges := []func() int64{
		func() int64 { return r.Int64N(16) },                  // dense and small
		func() int64 { return r.Int64N(3 << denseChunkBits) }, // over several chunks
		func() int64 { return denseLimit - 8 + r.Int64N(16) }, // around the limit
		func() int64 { return -1 - r.Int64N(4) },              // negative
		func() int64 { return r.Int64N(1000) * (1 << 20) },    // spread out
	}
	for round := range 200 {
		var tab denseTable[slotpool.SlotID, int32]
		ref := map[slotpool.SlotID]int32{}
		ops := 1 + r.IntN(200)
		for range ops {
			k := slotpool.SlotID(keyRanges[r.IntN(len(keyRanges))]())
			if round%2 == 0 { // a small table: few distinct keys
				k = slotpool.SlotID(r.IntN(2*denseFew)) * 4096
			}
			switch r.IntN(3) {
			case 0, 1:
				v := 1 + r.Int32N(100)
				tab.set(k, v)
				ref[k] = v
			case 2:
				tab.del(k)
				delete(ref, k)
			}
			require.Equal(t, len(ref), tab.n, "round %d: size", round)
			got, ok := tab.get(k)
			want, wok := ref[k]
			require.Equal(t, wok, ok, "round %d: key %d present", round, k)
			require.Equal(t, want, got, "round %d: key %d", round, k)
		}
		seen := map[slotpool.SlotID]int32{}
		tab.each(func(k slotpool.SlotID, v int32) {
			_, dup := seen[k]
			assert.False(t, dup, "round %d: key %d visited twice", round, k)
			seen[k] = v
		})
		assert.Equal(t, ref, seen, "round %d: each visits every entry once", round)
		for k, v := range ref {
			got, ok := tab.get(k)
			assert.True(t, ok && got == v, "round %d: key %d", round, k)
		}
	}
}

// A pool holding a few slots of a large cluster keeps its slot index in
// the list: no chunk sized to the largest id.
func TestDenseTableFewEntriesAllocateNoChunk(t *testing.T) {
	var tab denseTable[slotpool.SlotID, int32]
	for i := range denseFew {
		tab.set(slotpool.SlotID(1000*i+999), int32(i+1))
	}
	assert.False(t, tab.grown)
	assert.Nil(t, tab.chunks)
	tab.set(5, 42)
	assert.True(t, tab.grown, "one entry more moves them to the chunks")
	for i := range denseFew {
		v, ok := tab.get(slotpool.SlotID(1000*i + 999))
		assert.True(t, ok)
		assert.Equal(t, int32(i+1), v)
	}
}

// TestDenseTableChunkSizes checks how chunks grow: a table of keys spread
// thinly keeps small chunks, and once a table holds a chunk's worth of
// entries its new chunks are made full at once (no doubling copies), and
// it still matches a map.
func TestDenseTableChunkSizes(t *testing.T) {
	var sparse denseTable[slotpool.SlotID, int32]
	for i := range 2 * denseFew {
		sparse.set(slotpool.SlotID(i<<denseChunkBits+7), int32(i+1))
	}
	for c, chunk := range sparse.chunks {
		assert.LessOrEqual(t, len(chunk), 16, "chunk %d of a sparse table", c)
	}

	var large denseTable[slotpool.SlotID, int32]
	ref := map[slotpool.SlotID]int32{}
	const full = 1 << denseChunkBits
	for k := range slotpool.SlotID(full) { // the first chunk doubles up to its full size
		large.set(k, int32(k%100+1))
		ref[k] = int32(k%100 + 1)
	}
	require.Len(t, large.chunks[0], full)
	large.set(2*full+5, 7) // a large table: the new chunk is full at once
	ref[2*full+5] = 7
	assert.Len(t, large.chunks[2], full)
	assert.Empty(t, large.chunks[1], "a chunk no key touched is not made")
	for k := slotpool.SlotID(0); k < full; k += 3 {
		large.del(k)
		delete(ref, k)
	}
	large.set(full+1, 9)
	ref[full+1] = 9
	require.Equal(t, len(ref), large.n)
	for k := slotpool.SlotID(-1); k < 3*full; k++ {
		got, ok := large.get(k)
		want, wok := ref[k]
		require.Equal(t, wok, ok, "key %d present", k)
		require.Equal(t, want, got, "key %d", k)
	}
}
