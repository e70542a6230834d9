package pool

import "slices"

// bulkStore holds the pool's bulk records: it hands one out for every
// submitted bulk and takes it back when the bulk retires, so that a long
// run allocates records for the most bulks ever live at once, not one per
// Submit.
//
// Which record it hands out matters at scale. In a long queue a bulk is
// cold by the time its turn comes, and its record is the first thing the
// head's turn reads. Records handed out in submission order sit in memory
// in queue order, and the head then advances through memory in a way the
// hardware prefetcher follows. A list of retired records reused last in,
// first out loses that order as soon as slots come back in a different
// order than they were handed out (tasks finishing in any order): the head
// then misses the cache at every turn. So the store walks a cursor through
// its records, in chunks it never moves (bulks are referenced by pointer),
// and hands out the next retired record the cursor meets: behind a queue
// of waiting bulks, the records it meets are those of bulks fulfilled
// long ago, mostly retired. When it meets only live ones (their tasks
// still run), the store grows by a chunk where the cursor goes next, which
// gives the records after it time to retire; once it holds twice as many records as
// are live, it takes a retired record from a list of spares instead.
type bulkStore struct {
	chunks      [][]bulk // in cursor order
	chunk, next int      // the cursor: chunks[chunk][next] is looked at next
	total, free int      // records, retired records
	// made holds the chunks in the order they were made: a record's
	// handle (bulk.handle) is its chunk's place here and its offset in it,
	// so that tables name a record with an int32, which the garbage
	// collector need not scan.
	made [][]bulk
	// spare holds the handles of retired records, and of records the
	// cursor took since they were added (dropped lazily: bulk.inSpare
	// says which are here). Handles, not pointers: nothing for the
	// garbage collector to scan, at half the size.
	spare []int32
}

// scanRecords is how many records the cursor looks at for a retired one
// before the store grows or takes a spare.
const scanRecords = 4

// take returns a retired record, now live.
func (s *bulkStore) take() *bulk {
	if s.free > 0 {
		for range scanRecords {
			if b := s.advance(); !b.taken {
				return s.use(b)
			}
		}
		// Grow while under twice the live records, then take a spare.
		for len(s.spare) > 0 && s.total >= 2*(s.total-s.free) {
			b := s.at(s.spare[len(s.spare)-1])
			s.spare = s.spare[:len(s.spare)-1]
			b.inSpare = false
			if !b.taken {
				return s.use(b)
			}
		}
	}
	s.grow()
	return s.use(s.advance())
}

// put takes back a record whose bulk retired.
func (s *bulkStore) put(b *bulk) {
	b.taken = false
	s.free++
	if !b.inSpare {
		b.inSpare = true
		s.spare = append(s.spare, b.handle)
	}
}

// use marks a retired record live.
func (s *bulkStore) use(b *bulk) *bulk {
	b.taken = true
	s.free--
	return b
}

// advance returns the record at the cursor and moves the cursor on,
// cycling through the chunks.
func (s *bulkStore) advance() *bulk {
	b := &s.chunks[s.chunk][s.next]
	if s.next++; s.next == len(s.chunks[s.chunk]) {
		s.next = 0
		if s.chunk++; s.chunk == len(s.chunks) {
			s.chunk = 0
		}
	}
	return b
}

// handleChunkBits is the bits of a handle that give the offset in a
// chunk: chunks hold at most 1<<handleChunkBits records.
const handleChunkBits = 10

// at returns the record with handle h.
func (s *bulkStore) at(h int32) *bulk {
	return &s.made[h>>handleChunkBits][h&(1<<handleChunkBits-1)]
}

// grow adds a chunk of retired records where the cursor goes next: before
// its chunk if it is at a chunk's first record, else after its chunk (the
// rest of which waits for the cursor's next lap). The cursor moves to the
// new chunk's first record. Chunks double from 1 to 1,024 records: a pool
// with few bulks live at once (a job running one region at a time)
// allocates little.
func (s *bulkStore) grow() {
	c := make([]bulk, min(max(s.total, 1), 1<<handleChunkBits)) // zero records are retired
	for i := range c {
		c[i].handle = int32(len(s.made)<<handleChunkBits | i)
	}
	s.made = append(s.made, c)
	at := 0
	if len(s.chunks) > 0 {
		at = s.chunk
		if s.next > 0 {
			at++
		}
	}
	s.chunks = slices.Insert(s.chunks, at, c)
	s.chunk, s.next = at, 0
	s.total += len(c)
	s.free += len(c)
	s.spare = slices.Grow(s.spare, len(c)) // room for the new records to retire
}
