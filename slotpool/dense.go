package slotpool

// denseLimit bounds the keys a denseTable keeps in its slice.
const denseLimit = 1 << 21

// denseTable maps ids to values: keys in [0, denseLimit) (the usual dense
// ids: slots 0..n-1, the scheduler's bulks of first attempts) index a
// slice, others go to a map, so the hot path hashes nothing. The zero
// value of V means absent; the zero table is empty.
type denseTable[K ~int64, V comparable] struct {
	dense  []V
	sparse map[K]V
	n      int
}

func (t *denseTable[K, V]) get(k K) (V, bool) {
	var zero V
	if k >= 0 && k < denseLimit {
		if k < K(len(t.dense)) {
			v := t.dense[k]
			return v, v != zero
		}
		return zero, false
	}
	v, ok := t.sparse[k]
	return v, ok
}

// set stores v (not the zero value) under k.
func (t *denseTable[K, V]) set(k K, v V) {
	if _, ok := t.get(k); !ok {
		t.n++
	}
	if k >= 0 && k < denseLimit {
		if k >= K(len(t.dense)) {
			n := min(max(int(k)+1, 2*len(t.dense), 64), denseLimit)
			t.dense = append(t.dense, make([]V, n-len(t.dense))...)
		}
		t.dense[k] = v
		return
	}
	if t.sparse == nil {
		t.sparse = map[K]V{}
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
		t.dense[k] = zero
		return
	}
	delete(t.sparse, k)
}

// each calls f for every entry (dense keys ascending, then the map's in
// no order). For invariant checks: it costs O(the largest dense key).
func (t *denseTable[K, V]) each(f func(K, V)) {
	var zero V
	for k, v := range t.dense {
		if v != zero {
			f(K(k), v)
		}
	}
	for k, v := range t.sparse {
		f(k, v)
	}
}
