package slotpool

import "github.com/regionsched/regionsched/internal/reuse"

// Reset makes p the empty pool New(cfg) returns, keeping its tables of
// slots and bulks, its event buffer and its maps for the slots and bulks
// to come. A caller that runs one job after another (the simulator, run
// after run) then allocates that storage once, not once per job, and
// gives the garbage collector less to do. What p handed out stays the
// caller's (the slot lists of Fulfilled events are never reused); a Link
// made on p must not be used after Reset: it shares p's event buffers.
// Reset takes time in proportion to the storage p keeps, which has room
// for the most slots and bulks p held: for far fewer, New is cheaper.
func (p *Pool) Reset(cfg Config) {
	p.bulkRecs.reset()
	for _, c := range p.slotChunks {
		clear(c)
	}
	p.slotDense.reset()
	p.bulks.reset()
	clear(p.profileIdx)
	clear(p.shapeIdx)
	clear(p.asks)
	*p = Pool{
		slotChunks: p.slotChunks,
		slotDense:  p.slotDense,
		bulks:      p.bulks,
		bulkRecs:   p.bulkRecs,
		events:     reuse.Emptied(p.events),
		profileIdx: p.profileIdx,
		shapeIdx:   p.shapeIdx,
		asks:       p.asks,
		idSortBuf:  p.idSortBuf[:0],
	}
	p.init(cfg)
}

// reset retires every record, keeping the chunks for the bulks of a pool
// reset (Pool.Reset); the cursor starts again at the first record. A
// record keeps its handle and its many record (storage, written again
// when used).
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

// reset empties the table, keeping its list and its chunks (cleared) for
// the keys to come.
func (t *denseTable[K, V]) reset() {
	for _, c := range t.chunks {
		clear(c)
	}
	clear(t.sparse)
	*t = denseTable[K, V]{few: t.few[:0], chunks: t.chunks, sparse: t.sparse}
}
