package scheduler

import "github.com/regionsched/regionsched/internal/schedreuse"

func init() {
	schedreuse.New = newScheduler
	schedreuse.Ready = (*Scheduler).takeReady
}

// zeroed returns n zero values in old's storage if it has room for them,
// else in new storage.
func zeroed[T any](old []T, n int) []T {
	if cap(old) < n {
		return make([]T, n)
	}
	old = old[:n]
	clear(old)
	return old
}

// keepStorage gives s, a scheduler just made, the storage of old's lists
// that grow with the job (the Ready buffers, the slot lists of
// one-member regions' requests, the live regions, the slot table),
// emptied and cleared: what they pointed to is not kept alive, and s
// reads them as the new lists they replace. old must not be used after.
func (s *Scheduler) keepStorage(old *Scheduler) {
	for i := range s.bufs {
		b, o := &s.bufs[i], &old.bufs[i]
		b.Requests, b.Cancel, b.Released = emptied(o.Requests), emptied(o.Cancel), emptied(o.Released)
		b.PartitionsReleased, b.Deploy = emptied(o.PartitionsReleased), emptied(o.Deploy)
	}
	s.oneSlots, s.spareSlots = emptied(old.oneSlots), emptied(old.spareSlots)
	s.burstRequests, s.burstSlots = emptied(old.burstRequests), emptied(old.burstSlots)
	s.lives, s.freeLives = emptied(old.lives), old.freeLives[:0]
	s.requestBuf = emptied(old.requestBuf)
	s.slots.dense = emptied(old.slots.dense)
	*old = Scheduler{}
}

// emptied returns l with no element, its storage cleared.
func emptied[T any](l []T) []T {
	clear(l[:cap(l)])
	return l[:0]
}
