package pool

// denseLimit bounds the keys a denseTable keeps in its chunks.
const denseLimit = 1 << 21

// denseChunkBits sets the size of a denseTable's chunks.
const denseChunkBits = 12

// denseTable maps ids to values: keys in [0, denseLimit) (the usual dense
// ids: slots 0..n-1, the scheduler's bulks of first attempts) index
// chunks of a slice, allocated when a key in them is first set (and grown
// by doubling up to their full size, or made full at once in a table that
// holds a chunk's worth of entries), others go to a map, so the hot path
// hashes nothing. Growing copies at most one chunk: a million ids cost
// their chunks about once, not a doubling slice's copies. Until it holds
// more than denseFew entries, a table keeps them in a short list instead:
// the pool of one job among thousands holds a few slots whose ids are
// spread over the whole cluster, and should not cost a chunk sized to
// the largest of them. The zero value of V means absent; the zero table
// is empty.
type denseTable[K ~int64, V comparable] struct {
	few    []denseEntry[K, V] // the entries, in no order, until grown
	grown  bool               // the entries are in chunks and sparse
	chunks [][]V              // chunk i holds keys i<<denseChunkBits ...; nil until used
	sparse map[K]V
	n      int
}

// denseFew is the number of entries a denseTable keeps in its list.
const denseFew = 8

// denseEntry is an entry of a denseTable's list.
type denseEntry[K ~int64, V comparable] struct {
	k K
	v V
}

func (t *denseTable[K, V]) get(k K) (V, bool) {
	if !t.grown { // the chunks and the map are empty
		return t.getFew(k)
	}
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

// getFew is get while the entries are in the list.
func (t *denseTable[K, V]) getFew(k K) (V, bool) {
	for i := range t.few {
		if t.few[i].k == k {
			return t.few[i].v, true
		}
	}
	var zero V
	return zero, false
}

// set stores v (not the zero value) under k.
func (t *denseTable[K, V]) set(k K, v V) {
	if !t.grown && t.setFew(k, v) {
		return
	}
	if k >= 0 && k < denseLimit {
		c := int(k >> denseChunkBits)
		if c >= len(t.chunks) {
			t.chunks = append(t.chunks, make([][]V, c+1-len(t.chunks))...)
		}
		off := int(k & (1<<denseChunkBits - 1))
		if off >= len(t.chunks[c]) {
			// A chunk starts small and doubles up to its full size (values
			// are copied, never referenced): a table of a few small keys,
			// or of keys spread thinly, costs little. A table that holds a
			// chunk's worth of entries is a large one: its chunks are made
			// full at once.
			n := 1 << denseChunkBits
			if t.n < 1<<denseChunkBits {
				n = max(16, len(t.chunks[c]))
				for n <= off {
					n *= 2
				}
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

// setFew is set while the entries are in the list: false when the list
// is full, its entries then moved to the chunks and the map.
func (t *denseTable[K, V]) setFew(k K, v V) bool {
	for i := range t.few {
		if t.few[i].k == k {
			t.few[i].v = v
			return true
		}
	}
	if len(t.few) < denseFew {
		t.few = append(t.few, denseEntry[K, V]{k, v})
		t.n++
		return true
	}
	few := t.few
	t.few, t.grown, t.n = nil, true, 0
	for _, e := range few {
		t.set(e.k, e.v)
	}
	return false
}

func (t *denseTable[K, V]) del(k K) {
	if !t.grown {
		for i := range t.few {
			if t.few[i].k == k {
				last := len(t.few) - 1
				t.few[i] = t.few[last]
				t.few[last] = denseEntry[K, V]{}
				t.few = t.few[:last]
				t.n--
				return
			}
		}
		return
	}
	var zero V
	if k >= 0 && k < denseLimit { // the entry's place looked up once, not by get and again here
		if c := int(k >> denseChunkBits); c < len(t.chunks) {
			if off := int(k & (1<<denseChunkBits - 1)); off < len(t.chunks[c]) && t.chunks[c][off] != zero {
				t.chunks[c][off] = zero
				t.n--
			}
		}
		return
	}
	if _, ok := t.sparse[k]; ok {
		delete(t.sparse, k)
		t.n--
	}
}

// each calls f for every entry: the list's in no order while it holds
// them, else dense keys ascending, then the map's in no order. For invariant checks: it costs
// O(the largest dense key).
func (t *denseTable[K, V]) each(f func(K, V)) {
	for _, e := range t.few {
		f(e.k, e.v)
	}
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
