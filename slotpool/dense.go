package slotpool

// denseLimit bounds the keys a denseTable keeps in its chunks.
const denseLimit = 1 << 21

// denseChunkBits sets the size of a denseTable's chunks.
const denseChunkBits = 12

// denseTable maps ids to values: keys in [0, denseLimit) (the usual dense
// ids: slots 0..n-1, the scheduler's bulks of first attempts) index
// chunks of a slice, allocated when a key in them is first set (and grown
// by doubling up to their full size), others go to a map, so the hot path
// hashes nothing. Growing copies at most one chunk: a million ids cost
// their chunks about once, not a doubling slice's copies. The zero value of V means absent; the zero table is empty.
type denseTable[K ~int64, V comparable] struct {
	chunks [][]V // chunk i holds keys i<<denseChunkBits ...; nil until used
	sparse map[K]V
	n      int
}

func (t *denseTable[K, V]) get(k K) (V, bool) {
	var zero V
	if k >= 0 && k < denseLimit {
		if c := int(k >> denseChunkBits); c < len(t.chunks) {
			if off := int(k & (1<<denseChunkBits - 1)); off < len(t.chunks[c]) {
				v := t.chunks[c][off]
				return v, v != zero
			}
		}
		return zero, false
	}
	v, ok := t.sparse[k]
	return v, ok
}

// set stores v (not the zero value) under k.
func (t *denseTable[K, V]) set(k K, v V) {
	if k >= 0 && k < denseLimit {
		c := int(k >> denseChunkBits)
		if c >= len(t.chunks) {
			t.chunks = append(t.chunks, make([][]V, c+1-len(t.chunks))...)
		}
		off := int(k & (1<<denseChunkBits - 1))
		if off >= len(t.chunks[c]) {
			// A chunk starts small and doubles up to its full size (values
			// are copied, never referenced): a table of a few small keys
			// costs little.
			n := max(16, len(t.chunks[c]))
			for n <= off {
				n *= 2
			}
			grown := make([]V, min(n, 1<<denseChunkBits))
			copy(grown, t.chunks[c])
			t.chunks[c] = grown
		}
		var zero V
		if t.chunks[c][off] == zero {
			t.n++
		}
		t.chunks[c][off] = v
		return
	}
	if t.sparse == nil {
		t.sparse = map[K]V{}
	}
	if _, ok := t.sparse[k]; !ok {
		t.n++
	}
	t.sparse[k] = v
}

func (t *denseTable[K, V]) del(k K) {
	if _, ok := t.get(k); !ok {
		return
	}
	t.n--
	if k >= 0 && k < denseLimit {
		var zero V
		t.chunks[k>>denseChunkBits][k&(1<<denseChunkBits-1)] = zero
		return
	}
	delete(t.sparse, k)
}

// each calls f for every entry (dense keys ascending, then the map's in
// no order). For invariant checks: it costs O(the largest dense key).
func (t *denseTable[K, V]) each(f func(K, V)) {
	var zero V
	for c, chunk := range t.chunks {
		for i, v := range chunk {
			if v != zero {
				f(K(c<<denseChunkBits+i), v)
			}
		}
	}
	for k, v := range t.sparse {
		f(k, v)
	}
}
