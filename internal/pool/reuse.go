package pool

// Renew returns the empty pool New(cfg) returns, made over the storage
// of old, a pool no longer used (nil: none): its slot table, its tables
// of slot and bulk ids, its bulk records and its event buffer, cleared. A
// caller that runs one job after another (the simulator, run after run,
// through package scheduler) then allocates that storage once, not once
// per job. old and any Link made on it must not be used after; what old
// handed out stays the caller's (the slot lists of Fulfilled events are
// never reused). Renew takes time in proportion to the storage old
// keeps, which has room for the most slots and bulks it held.
func Renew(old *Pool, cfg Config) *Pool {
	p := New(cfg)
	if old == nil {
		return p
	}
	for _, c := range old.slotChunks {
		clear(c)
	}
	p.slotChunks = old.slotChunks
	old.slotDense.reset()
	p.slotDense = old.slotDense
	old.bulks.reset()
	p.bulks = old.bulks
	old.bulkRecs.reset()
	p.bulkRecs = old.bulkRecs
	clear(old.events)
	p.events = old.events[:0]
	p.dirtyFree = old.dirtyFree[:0]
	*old = Pool{}
	return p
}

// reset empties the table, keeping its chunks (cleared) and its map for
// the keys to come: it is the zero table, but for that storage.
func (t *denseTable[K, V]) reset() {
	for _, c := range t.chunks {
		clear(c)
	}
	clear(t.sparse)
	*t = denseTable[K, V]{few: t.few[:0], chunks: t.chunks, sparse: t.sparse}
}

// reset retires every record, keeping the chunks (and each record's
// handle and its many record, storage written again when used); the
// cursor starts again at the first record.
func (s *bulkStore) reset() {
	for _, c := range s.made {
		for i := range c {
			c[i] = bulk{handle: c[i].handle, many: c[i].many}
		}
	}
	s.chunk, s.next = 0, 0
	s.free = s.total
	s.spare = s.spare[:0]
}
