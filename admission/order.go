package admission

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// The jobs of a queue that want a grant are kept in a red-black tree by
// orderKey: the grant loop walks them in policy order and stops as soon
// as the free slots run out, a job is taken out in O(log n) when it needs
// nothing more, and a fair-share job is re-keyed in O(log n) whenever its
// usage changes. A heap would give the first job cheaply but not the walk
// in order. The tree is intrusive (internal/rbtree): a job carries its
// links, so putting it in allocates nothing and taking it out searches
// nothing, which matters with thousands of jobs waiting, each put in and
// taken out once per region it runs.

// orderKey orders the waiting jobs of one queue: share first (fair share:
// usage relative to the job's share, smallest first, see keyWith; 0
// otherwise), then
// rank (minus the priority under Priority and FairShare; 0 otherwise),
// then submission time, then name: jobs submitted at the same instant are
// ordered by name, never by the order their submissions came in (the
// admission decides once per instant, in Decide).
type orderKey struct {
	share  float64
	rank   int64
	submit int64
	// head is the name's first 8 bytes, zero-padded, as a big-endian
	// number: it orders names as their bytes do, as far as it reaches, so
	// most comparisons of names end without reading them.
	head uint64
	name string
}

// nameHead is the head of an orderKey of that name.
func nameHead(name string) uint64 {
	var b [8]byte
	copy(b[:], name)
	return binary.BigEndian.Uint64(b[:])
}

// byKey orders the jobs of the order and per-size trees by their keys.
func byKey(a, b *job) int { return a.key.compare(b.key) }

// byHolderKey orders the jobs of the holders tree by their holder keys.
func byHolderKey(a, b *job) int { return a.hkey.compare(b.hkey) }

// compare orders keys: negative if x comes first, 0 if equal, positive
// if y comes first.
func (x orderKey) compare(y orderKey) int {
	if c := cmp.Compare(x.share, y.share); c != 0 {
		return c
	}
	if c := cmp.Compare(x.rank, y.rank); c != 0 {
		return c
	}
	if c := cmp.Compare(x.submit, y.submit); c != 0 {
		return c
	}
	if x.head != y.head {
		return cmp.Compare(x.head, y.head)
	}
	return strings.Compare(x.name, y.name)
}

// compareArrival orders jobs by submission time, earliest first, and
// those submitted at the same instant by name.
func compareArrival(a, b *job) int {
	if c := a.submit.Compare(b.submit); c != 0 {
		return c
	}
	if a.nameHead != b.nameHead {
		return cmp.Compare(a.nameHead, b.nameHead) // (as orderKey.compare)
	}
	return strings.Compare(a.spec.Name, b.spec.Name)
}

// keyOf computes a job's key under its queue's policy.
func keyOf(j *job) orderKey { return keyWith(j, j.granted) }

// keyWith is a job's key were it granted `granted` slots.
func keyWith(j *job, granted int) orderKey {
	k := orderKey{submit: j.submit.UnixNano(), head: j.nameHead, name: j.spec.Name}
	switch j.queue.cfg.Policy {
	case Priority:
		k.rank = -int64(j.spec.Priority)
	case FairShare:
		// Usage relative to the job's share: below it, the fraction of
		// its share it holds (under 1); at or above it, after every job
		// below its share, by slots per unit of priority (2 and more).
		k.rank = -int64(j.spec.Priority)
		if granted < j.entitled {
			k.share = float64(granted) / float64(j.entitled)
		} else {
			k.share = 2 + float64(granted)/float64(j.spec.Priority)
		}
	}
	return k
}

// updateOrder puts a job where it belongs in its queue's tree: in it, at
// its current key, while it wants a grant and may get one; out otherwise.
func (q *Queues) updateOrder(j *job) {
	qu := j.queue
	want := (j.waiting() || j.gangWaits()) && (j.state == JobAccepted || j.state == JobStarting || j.state == JobRunning)
	if j.inTree {
		sameKey := want && keyOf(j) == j.key
		if sameKey && j.bucket == j.sizeBucket() && j.bucketStarted == (j.state != JobAccepted) && j.bucketDriver == j.waitsForDriver() {
			return
		}
		q.dropFits(qu, j)
		if sameKey { // only its size changed: it keeps its place in order
			q.putFits(qu, j)
			return
		}
		q.noteOrderChange(qu)
		qu.order.Remove(&j.orderNode)
		q.orderChanged(qu, true)
		j.inTree = false
	}
	if want {
		j.key = keyOf(j)
		q.noteOrderChange(qu)
		had := qu.order.Len() > 0
		qu.order.Insert(&j.orderNode, j)
		q.orderChanged(qu, had)
		q.putFits(qu, j)
		j.inTree = true
	} else {
		if len(j.reserved)+len(j.incoming) > 0 {
			q.dropClaim(j) // it stopped waiting: its claim goes
		}
		if j.state == JobRunning {
			q.releasePlaceholders(j, "placeholder replaced: no request of the job waits")
		}
	}
}

// putFits puts j in its queue's per-size tree of its current size, and
// in its queue's asking tree unless it waits for its driver only.
func (q *Queues) putFits(qu *queue, j *job) {
	j.bucket, j.bucketStarted, j.bucketDriver = j.sizeBucket(), j.state != JobAccepted, j.waitsForDriver()
	t := &qu.fits[b2i(j.bucketStarted)][j.bucket]
	if *t == nil {
		*t = rbtree.New(byKey)
	}
	(*t).Insert(&j.fitsNode, j)
	if !j.bucketDriver && qu.asking != nil {
		qu.asking.Insert(&j.askingNode, j)
	}
}

// dropFits takes j out of the trees putFits put it in.
func (q *Queues) dropFits(qu *queue, j *job) {
	qu.fits[b2i(j.bucketStarted)][j.bucket].Remove(&j.fitsNode)
	if !j.bucketDriver && qu.asking != nil {
		qu.asking.Remove(&j.askingNode)
	}
}

// keepAsking starts qu's asking tree, as its first job with a driver is
// submitted: until then its order holds no job that waits for its driver,
// and is its asking tree.
func (q *Queues) keepAsking(qu *queue) {
	if qu.asking != nil {
		return
	}
	qu.asking = rbtree.New(byKey)
	for n := qu.order.First(); n != nil; n = n.Next() {
		qu.asking.Insert(&n.Item().askingNode, n.Item())
	}
}

// askingTree is the tree of qu's jobs that wait for a request or a gang:
// its asking tree, or its order while no job of it has a driver.
func (qu *queue) askingTree() *rbtree.Tree[*job] {
	if qu.asking != nil {
		return qu.asking
	}
	return qu.order
}

// waitsForDriver reports whether what the job waits for first is its
// driver alone: not a request of its pool, nor its gang.
func (j *job) waitsForDriver() bool {
	return j.driver && !j.hasSlot && !j.gangWaits()
}

// maxBucket is the largest size bucket: asks of maxBucket slots or more
// share it.
const maxBucket = 64

// sizeBucket is the size of the smallest grant the waiting job could take
// (its driver, or its smallest all-or-nothing ask), capped at maxBucket:
// the decide loop walks a queue only while some job it has not visited
// could fit the free slots (see decidePass).
func (j *job) sizeBucket() int {
	if j.gangWaits() {
		return min(j.spec.Gang.MinSlots, maxBucket)
	}
	if j.driver && !j.hasSlot {
		return 1
	}
	return j.asks.smallest()
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// entitle shares the cluster's slots among the active jobs of a fair-share
// queue (accepted and not ended) by priority, in whole slots: each gets
// the whole part of its priority-weighted share, and the slots left go to
// the largest remainders (ties: the higher priority, then the earlier
// submission). A job's key depends on its share, so the jobs whose share
// changed are put in their new places. It has work to do only when the
// queue's jobs or their priorities changed (queue.entitleDirty).
func (q *Queues) entitle(qu *queue) {
	if !qu.entitleDirty {
		return
	}
	qu.entitleDirty = false
	qu.jobs = slices.DeleteFunc(qu.jobs, func(j *job) bool { return j.state.Terminal() })
	weight := 0
	for _, j := range qu.jobs {
		weight += j.spec.Priority
	}
	if weight == 0 {
		return
	}
	total := len(q.slots) - q.nGone
	type rem struct {
		j *job
		r int
	}
	rems := make([]rem, 0, len(qu.jobs))
	given := 0
	for _, j := range qu.jobs {
		whole := total * j.spec.Priority / weight
		given += whole
		rems = append(rems, rem{j, total*j.spec.Priority - whole*weight})
		j.entitledNext = whole
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		if c := cmp.Compare(b.r, a.r); c != 0 {
			return c
		}
		if c := cmp.Compare(b.j.spec.Priority, a.j.spec.Priority); c != 0 {
			return c
		}
		return compareArrival(a.j, b.j)
	})
	for i := 0; i < total-given && i < len(rems); i++ {
		rems[i].j.entitledNext++
	}
	for _, j := range qu.jobs {
		if j.entitled != j.entitledNext {
			j.entitled = j.entitledNext
			q.updateOrder(j)
			q.updateHolder(j)
		}
	}
}

// checkAsking checks that each queue's asking tree holds exactly the jobs
// of its order that do not wait for their driver alone, and that every
// job in order was put in its trees as it waits now.
func (q *Queues) checkAsking() error {
	for _, qu := range q.qorder {
		n := 0
		for x := qu.order.First(); x != nil; x = x.Next() {
			j := x.Item()
			if j.bucketDriver != j.waitsForDriver() {
				return fmt.Errorf("admission: job %s is in the trees of %s as waiting for its driver alone: %v, it is %v", j.spec.Name, qu.cfg.Name, j.bucketDriver, j.waitsForDriver())
			}
			if !j.bucketDriver {
				n++
			}
		}
		if got := treeSize(qu.askingTree()); got != n {
			return fmt.Errorf("admission: queue %s's asking tree holds %d jobs, %d of its order wait for a request or a gang", qu.cfg.Name, got, n)
		}
	}
	return nil
}
