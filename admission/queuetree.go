package admission

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/regionsched/regionsched/internal/plural"
	"github.com/regionsched/regionsched/resource"
)

// Queues are tenants: each has a guaranteed and a maximum number of slots
// (QueueConfig.GuaranteedSlots, MaxSlots), and names make a hierarchy
// (root.prod.etl is a child of root.prod, which is a child of root). A
// configured child implies its parents. Jobs run in queues without
// children; a parent only adds up its children: what its subtree holds
// counts against its maximum, and its guarantee bounds its children's.
//
// The tree is a qnode per queue name, from root; each node counts the
// slots its subtree holds (used): drivers, slots granted to pools (those
// being reclaimed too), gang placeholders and free slots reserved for
// claims. The counts change wherever a slot changes hands (addUse), so a
// decision knows each queue's room in O(depth).

// qnode is one queue of the hierarchy, configured, created for a job, or
// implied by a child.
type qnode struct {
	name     string
	parent   *qnode
	children []*qnode // by name
	// nameRank is its place among its parent's children, by name.
	nameRank int
	// qu is the queue of that name, nil for a parent only implied by a
	// child.
	qu *queue
	// guaranteed and max: the configured capacities (max 0: unlimited).
	guaranteed, max int
	// used counts the slots the subtree holds, running the jobs counted
	// running in it (for the maxRunningJobs of its queue, qu).
	used, running int
	// leftIn is the decide pass that is done with its subtree
	// (leaveBranch).
	leftIn uint64
	// depth counts its parents.
	depth int
	// sorted is rankQueues' scratch: the children in the fair order,
	// sorted again only when unsorted is set (a child's slots or
	// guarantee changed since) or a child was added.
	sorted   []*qnode
	unsorted bool
	// rankBase is the rank rankQueues gave its subtree's first queue,
	// ranked how many queues its subtree has (rankFrom).
	rankBase, ranked int32
	// idx is the node's place in Queues.nodeList.
	idx int
	// resvMark is markReservers' mark: Queues.resvStamp when set.
	resvMark uint64
	// yielding, drivers, kept and keptKids are what the guarantees read
	// (tenantcounts.go).
	yielding, drivers, kept, keptKids int
	// bounds bound its subtree for keptIn (queuetree_bounds.go).
	bounds subBounds
}

// unlimited is the room of a queue without a maximum.
const unlimited = math.MaxInt / 4

// ErrBadCapacity is wrapped by a CapacityError.
var ErrBadCapacity = errors.New("admission: bad queue capacity")

// ErrParentQueue: a job names a queue that has child queues, or a queue
// is created under a queue that has jobs (jobs run in queues without
// children).
var ErrParentQueue = errors.New("admission: jobs run in queues without children")

// CapacityError is a configuration whose guaranteed and maximum slots do
// not add up: Queue's guarantee over its own maximum (Children empty), or
// the guarantees of Queue's Children adding up to more than Queue's
// guarantee or maximum (Limit, of Field). A child without a guarantee of
// its own counts its children's (and so on down).
type CapacityError struct {
	// Queue is the queue at fault: the one whose guarantee exceeds its
	// maximum, or the parent its children's guarantees exceed.
	Queue string
	// Field is the parent's field that is exceeded: "maxSlots" or
	// "guaranteedSlots".
	Field string
	// Limit is that field's value.
	Limit int
	// Guaranteed is the guarantee over it: Queue's own, or its children's
	// sum.
	Guaranteed int
	// Children lists the children whose guarantees add up to Guaranteed,
	// each with its guarantee, "(N, its children's)" for one counting its
	// children's (nil when Queue's own guarantee is at fault).
	Children []string
}

// Error names the queues and the values, e.g. `admission: queue root.prod:
// the guaranteedSlots of its children root.prod.a (4), root.prod.b (3) add
// up to 7, over its guaranteedSlots 6`.
func (e *CapacityError) Error() string {
	if len(e.Children) == 0 {
		return fmt.Sprintf("%v: queue %s: guaranteedSlots %d is over its %s %d (valid: 0 ... %d)",
			ErrBadCapacity, e.Queue, e.Guaranteed, e.Field, e.Limit, e.Limit)
	}
	return fmt.Sprintf("%v: queue %s: the guaranteedSlots of its children %s add up to %d, over its %s %d",
		ErrBadCapacity, e.Queue, strings.Join(e.Children, ", "), e.Guaranteed, e.Field, e.Limit)
}

// Unwrap returns ErrBadCapacity.
func (e *CapacityError) Unwrap() error { return ErrBadCapacity }

// MaxOverParentError is a configuration in which a queue's maximum is
// over the maximum of one of its parents, which it could never reach
// (YuniKorn refuses it too): Queue's MaxSlots, over Parent's ParentMax.
type MaxOverParentError struct {
	// Queue is the queue whose maximum is at fault.
	Queue string
	// Max is its maxSlots.
	Max int
	// Parent is the nearest parent (or further ancestor) with the least
	// maximum, ParentMax.
	Parent    string
	ParentMax int
}

// Error names the queues and the values, e.g. `admission: bad queue
// capacity: queue root.prod.etl: maxSlots 8 is over the maxSlots 4 of
// root.prod (valid: 1 ... 4, or none)`.
func (e *MaxOverParentError) Error() string {
	return fmt.Sprintf("%v: queue %s: maxSlots %d is over the maxSlots %d of %s (valid: 1 ... %d, or none)",
		ErrBadCapacity, e.Queue, e.Max, e.ParentMax, e.Parent, e.ParentMax)
}

// Unwrap returns ErrBadCapacity.
func (e *MaxOverParentError) Unwrap() error { return ErrBadCapacity }

// ParentQueueError refuses a job in a queue with children, or a queue
// under one with jobs.
type ParentQueueError struct {
	// Queue is the queue that has (or would have) both jobs and children.
	Queue string
	// Child is one of its children.
	Child string
	// Job is a job that names it (or "" when the queue is configured
	// and a job names it before its child is configured).
	Job string
}

// Error names the queue, its child and the job.
func (e *ParentQueueError) Error() string {
	return fmt.Sprintf("%v: queue %s has the child queue %s and may not hold job %q (name a queue without children, e.g. %s)",
		ErrParentQueue, e.Queue, e.Child, e.Job, e.Child)
}

// Unwrap returns ErrParentQueue.
func (e *ParentQueueError) Unwrap() error { return ErrParentQueue }

// parentName returns the name of a queue's parent ("" for root).
func parentName(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// node returns the node of a queue name, creating it and its parents.
func (q *Queues) node(name string) *qnode {
	if n, ok := q.nodes[name]; ok {
		return n
	}
	n := &qnode{name: name}
	if pn := parentName(name); pn != "" {
		n.parent = q.node(pn)
		n.depth = n.parent.depth + 1
		p := n.parent
		i, _ := slices.BinarySearchFunc(p.children, name, func(c *qnode, s string) int { return strings.Compare(c.name, s) })
		p.children = slices.Insert(p.children, i, n)
		for k, c := range p.children[i:] {
			c.nameRank = i + k
		}
	}
	n.markStale()
	q.nodes[name] = n
	n.idx = len(q.nodeList) // (after its parents: they are created first)
	q.nodeList = append(q.nodeList, n)
	if n.parent == nil && name == "root" {
		q.root = n
	}
	return n
}

// checkCapacities checks the configured capacities: no guarantee over its
// own queue's maximum, no maximum over a parent's, no children's
// guarantees adding up to more than their parent's guarantee (when it
// has one) or maximum. A queue without a guarantee counts, among its
// siblings, the guarantees of its children (and so on down), as
// YuniKorn's validation does: a guarantee deeper in the tree is part of
// every ancestor's.
func (q *Queues) checkCapacities() error {
	// counted[n.idx] is the guarantee n counts for among its siblings.
	// nodeList has every parent before its children: backwards, each
	// queue's children are counted before it.
	counted := make([]int, len(q.nodeList))
	for i := len(q.nodeList) - 1; i >= 0; i-- {
		n := q.nodeList[i]
		if n.guaranteed > 0 {
			counted[i] = n.guaranteed
			continue
		}
		for _, c := range n.children {
			counted[i] += counted[c.idx]
		}
	}
	names := make([]string, 0, len(q.nodes))
	for name := range q.nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := q.nodes[name]
		if n.max > 0 && n.guaranteed > n.max {
			return &CapacityError{Queue: n.name, Field: "maxSlots", Limit: n.max, Guaranteed: n.guaranteed}
		}
		if p := leastMaxAbove(n); p != nil && n.max > p.max {
			return &MaxOverParentError{Queue: n.name, Max: n.max, Parent: p.name, ParentMax: p.max}
		}
		sum := 0
		var kids []string
		for _, c := range n.children {
			g := counted[c.idx]
			if g == 0 {
				continue
			}
			sum += g
			if c.guaranteed > 0 {
				kids = append(kids, fmt.Sprintf("%s (%d)", c.name, g))
			} else {
				kids = append(kids, fmt.Sprintf("%s (%d, its children's)", c.name, g))
			}
		}
		switch {
		case n.guaranteed > 0 && sum > n.guaranteed:
			return &CapacityError{Queue: n.name, Field: "guaranteedSlots", Limit: n.guaranteed, Guaranteed: sum, Children: kids}
		case n.max > 0 && sum > n.max:
			return &CapacityError{Queue: n.name, Field: "maxSlots", Limit: n.max, Guaranteed: sum, Children: kids}
		}
	}
	return nil
}

// hasJobs reports whether any job was submitted to the queue.
func (qu *queue) hasJobs() bool { return qu.submitted > 0 }

// checkLeaf refuses job in queue qu when qu has children, and a new queue
// qu whose parent (or further ancestor) has jobs.
func (q *Queues) checkLeaf(qu *queue, job string) error {
	n := qu.node
	if len(n.children) > 0 {
		return &ParentQueueError{Queue: n.name, Child: n.children[0].name, Job: job}
	}
	for p := n.parent; p != nil; p = p.parent {
		if p.qu != nil && p.qu.hasJobs() {
			return &ParentQueueError{Queue: p.name, Child: n.name, Job: p.qu.firstJob}
		}
	}
	return nil
}

// CheckJobQueues checks, before a run, that the queues its jobs name
// (jobQueues, "" for root.default) fit the configured ones: no job names
// a queue that has a child queue, configured or implied by another job's
// queue. It returns a *ParentQueueError naming the queue, its child and a
// job, or nil.
func CheckJobQueues(queues []QueueConfig, jobs []string, jobQueues []string) error {
	names := map[string]bool{"root.default": true}
	for _, qc := range queues {
		names[qc.Name] = true
	}
	for _, jq := range jobQueues {
		if jq == "" {
			jq = "root.default"
		}
		names[jq] = true
	}
	child := map[string]string{}
	for name := range names {
		for c, p := name, parentName(name); p != ""; c, p = p, parentName(p) {
			if old, ok := child[p]; !ok || c < old {
				child[p] = c
			}
		}
	}
	for i, jq := range jobQueues {
		if jq == "" {
			jq = "root.default"
		}
		if c, ok := child[jq]; ok {
			return &ParentQueueError{Queue: jq, Child: c, Job: jobs[i]}
		}
	}
	return nil
}

// addUse counts d more slots held by qu's jobs, in qu and its parents.
func (q *Queues) addUse(qu *queue, d int) {
	q.uses++
	qu.node.markStale()
	for n := qu.node; n != nil; n = n.parent {
		n.used += d
		if n.parent != nil {
			n.parent.unsorted = true
		}
	}
}

// room is how many more slots qu may hold: the least room under the
// maximum of qu and of its parents (unlimited if none has one).
func (q *Queues) room(qu *queue) int {
	r := unlimited
	for n := qu.node; n != nil; n = n.parent {
		if n.max > 0 {
			r = min(r, n.max-n.used)
		}
	}
	return max(r, 0)
}

// capOf is the most slots qu may ever hold: the least maximum of qu and
// its parents (unlimited if none has one).
func (qu *queue) capOf() int {
	c := unlimited
	for n := qu.node; n != nil; n = n.parent {
		if n.max > 0 {
			c = min(c, n.max)
		}
	}
	return c
}

// checkNewLeaf refuses to create queue name for job when the name is a
// parent already (implied by a child), or a parent of it has jobs.
func (q *Queues) checkNewLeaf(name, job string) error {
	if n, ok := q.nodes[name]; ok && len(n.children) > 0 {
		return &ParentQueueError{Queue: name, Child: n.children[0].name, Job: job}
	}
	for p := parentName(name); p != ""; p = parentName(p) {
		if n, ok := q.nodes[p]; ok && n.qu != nil && n.qu.hasJobs() {
			return &ParentQueueError{Queue: p, Child: name, Job: n.qu.firstJob}
		}
	}
	return nil
}

// leastMaxAbove returns the nearest parent of n (or further ancestor)
// with the least maximum, or nil if none has one.
func leastMaxAbove(n *qnode) *qnode {
	var least *qnode
	for p := n.parent; p != nil; p = p.parent {
		if p.max > 0 && (least == nil || p.max < least.max) {
			least = p
		}
	}
	return least
}

// CheckCapacities checks the guaranteed and maximum slots of queues as a
// hierarchy (a child implies its parents): no guarantee over its queue's
// own maximum, no maximum over a parent's, no children's guarantees
// adding up to more than their parent's guarantee or maximum (a child
// without a guarantee counting its children's). It returns a
// *CapacityError or a *MaxOverParentError naming the queues, or nil; New
// checks the same.
func CheckCapacities(queues []QueueConfig) error {
	q := &Queues{nodes: map[string]*qnode{}}
	for _, qc := range queues {
		n := q.node(qc.Name)
		n.guaranteed, n.max = qc.GuaranteedSlots, qc.MaxSlots
	}
	return q.checkCapacities()
}

// addGranted counts d more slots granted to j (its driver, its pool's,
// its placeholders), in j and its queues.
func (q *Queues) addGranted(j *job, d int) {
	j.granted += d
	q.addUse(j.queue, d)
}

// addRunning counts d more jobs running in n's subtree, and so in its
// parents'.
func (n *qnode) addRunning(d int) {
	for ; n != nil; n = n.parent {
		n.running += d
	}
}

// runLimit returns the queue, qu or a parent, whose maxRunningJobs keeps
// a job of qu from starting now: it has as many jobs running in its
// subtree. Nil if none does.
func (qu *queue) runLimit() *qnode {
	for n := qu.node; n != nil; n = n.parent {
		if n.qu != nil && n.qu.cfg.MaxRunningJobs > 0 && n.running >= n.qu.cfg.MaxRunningJobs {
			return n
		}
	}
	return nil
}

// limitedRuns returns the highest of qu and its parents with a
// maxRunningJobs, nil if none has one.
func (qu *queue) limitedRuns() *qnode {
	var top *qnode
	for n := qu.node; n != nil; n = n.parent {
		if n.qu != nil && n.qu.cfg.MaxRunningJobs > 0 {
			top = n
		}
	}
	return top
}

// freeToward adds to n[p] (n may be own) the free slots of each profile
// p that a job of qu may take toward the requests want, beside the slots
// own it has (per profile; nil: none): all of them, or, when its queues'
// maxima leave room for fewer, as many as the room; which ones matters
// only on a cluster of several profiles (a request may fit the slots of
// one profile only), and pickToward chooses them. Only free slots of the
// profiles mask allows count (nil: all; see driverslot.go).
func (q *Queues) freeToward(qu *queue, want []resource.Count, own, n []int, mask []bool) {
	r := q.room(qu)
	switch { // (the common cases, without allocating)
	case mask == nil && r >= q.nFree:
		for p, f := range q.free {
			n[p] += len(f)
		}
		return
	case mask == nil && len(q.profiles) == 1:
		n[0] += r
		return
	}
	free, total := make([]int, len(q.profiles)), 0
	for p, f := range q.free {
		if mask == nil || mask[p] {
			free[p] = len(f)
			total += len(f)
		}
	}
	q.freeWithin(free, total, r, want, own, n)
}

// freeWithin adds to n[p] (n may be own) the slots of each profile p, of
// the free[p] there are (total in all), that a job may take toward want
// beside own within room r: all of them, as many as r of a single
// profile, or those pickToward chooses.
func (q *Queues) freeWithin(free []int, total, r int, want []resource.Count, own, n []int) {
	switch {
	case r >= total:
		for p, k := range free {
			n[p] += k
		}
	case len(free) == 1:
		n[0] += r
	default:
		q.pickToward(free, r, want, own, n)
	}
}

// pickToward adds to n[p] (n may be own) the slots of each profile p, of
// the free[p] there are and r in all, that serve the requests of want
// beside own (per profile; nil: none), in their order: for each request,
// if own and the slots picked so far do not serve it with those before
// it, one more slot of the smallest profile that does (as
// resource.Assign prefers small slots, keeping the large ones for the
// requests only they fit), while r lasts. A request no slot serves is
// passed over (and the rest of its count with it); slots that would
// serve none of want are not picked.
func (q *Queues) pickToward(free []int, r int, want []resource.Count, own, n []int) {
	bySize := make([]int, len(free))
	for p := range bySize {
		bySize[p] = p
	}
	slices.SortStableFunc(bySize, func(a, b int) int { return resource.CompareSize(q.profiles[a], q.profiles[b]) })
	have := slices.Clone(own)
	if have == nil {
		have = make([]int, len(free))
	}
	picks := make([]int, len(free))
	var prefix []resource.Count
	m := 0
	for _, c := range want {
		prefix = append(prefix, resource.Count{Profile: c.Profile})
		for u := 0; u < c.N && r > 0; u++ {
			prefix[len(prefix)-1].N++
			if q.matched(prefix, have) > m {
				m++
				continue
			}
			if !q.pickOne(free, prefix, m, bySize, have, picks) {
				break // (its other units are the same request: none is served either)
			}
			m++
			r--
		}
	}
	for p, k := range picks {
		n[p] += k
	}
}

// pickOne picks for pickToward one more slot, of the first profile of
// bySize with a free slot left that raises the matching of prefix above
// m (counting it in have and n); it reports whether one did.
func (q *Queues) pickOne(free []int, prefix []resource.Count, m int, bySize, have, n []int) bool {
	for _, p := range bySize {
		if n[p] == free[p] {
			continue
		}
		have[p]++
		if q.matched(prefix, have) > m {
			n[p]++
			return true
		}
		have[p]--
	}
	return false
}

// capNode returns the node whose maxSlots caps qu the most (nil: none).
func (qu *queue) capNode() *qnode {
	var c *qnode
	for n := qu.node; n != nil; n = n.parent {
		if n.max > 0 && (c == nil || n.max < c.max) {
			c = n
		}
	}
	return c
}

// fitsQueue checks that the job's gang, and its driver plus largest
// region, fit its queue's maxSlots and its parents'.
func (q *Queues) fitsQueue(j *job) (string, bool) {
	c := j.queue.capNode()
	if c == nil {
		return "", true
	}
	capText := fmt.Sprintf("queue %s holds at most %s (maxSlots)", c.name, plural.Count(c.max, "slot"))
	if g := j.spec.Gang; g != nil && g.MinSlots > c.max {
		return fmt.Sprintf("its gang of %s can never be reserved: %s", plural.Count(g.MinSlots, "slot"), capText), false
	}
	n := sumCounts(j.spec.Largest)
	what, with := j.spec.LargestName, ""
	if what == "" {
		what = "the largest region"
	}
	if j.spec.Driver != nil {
		n++
		with = " with the driver"
	}
	if n > c.max {
		return fmt.Sprintf("%s needs %s at once%s; %s", what, plural.Count(n, "slot"), with, capText), false
	}
	return "", true
}

// MaxSlotsOf returns the most slots a job of the named queue may ever
// hold with the queues configured: the least maxSlots of the queue and
// its parents, 0 if none has one. A runtime caps a gang's derived
// minimum with it, as with the cluster's size.
func MaxSlotsOf(queues []QueueConfig, queue string) int {
	if queue == "" {
		queue = "root.default"
	}
	least := 0
	for _, qc := range queues {
		if qc.MaxSlots > 0 && (qc.Name == queue || strings.HasPrefix(queue, qc.Name+".")) && (least == 0 || qc.MaxSlots < least) {
			least = qc.MaxSlots
		}
	}
	return least
}

// QueueUsage is one queue of the hierarchy as it stands (Queues.Usage).
type QueueUsage struct {
	// Name is the queue's full name; a parent only implied by its
	// children is listed too.
	Name string
	// Guaranteed and Max are its configured slots (Max 0: unlimited).
	Guaranteed, Max int
	// Used counts the slots its subtree holds: drivers, slots granted
	// (those being reclaimed too), gang placeholders, free slots reserved
	// for claims.
	Used int
}

// Usage returns every queue of the hierarchy, root included, by name.
func (q *Queues) Usage() []QueueUsage {
	out := make([]QueueUsage, 0, len(q.nodes))
	for _, n := range q.nodes {
		out = append(out, QueueUsage{Name: n.name, Guaranteed: n.guaranteed, Max: n.max, Used: n.used})
	}
	slices.SortFunc(out, func(a, b QueueUsage) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// startFitsRoom reports whether j's driver with its first regions (as
// startNeed counts them) fits the room its queues' maxima leave, with the
// slots kept for it: a driver granted beyond that would hold a slot its
// own regions, or another job's of the queue, need, and is never taken
// back.
func (q *Queues) startFitsRoom(j *job) bool {
	_, n := q.startNeed(j)
	return n <= q.room(j.queue)+len(j.reserved)+len(j.placeholders)
}

// capBudget bounds the slots a claim for c takes from jobs outside each
// queue of c's with a maximum (a slot moving between two jobs under one
// queue does not change what it holds).
type capBudget []capRoom

type capRoom struct {
	n   *qnode
	rem int
}

// newCapBudget returns the budget of a claim for c that takes free free
// slots, in b's storage: each of c's queues with a maximum may take its
// room, less the free slots and the slots coming to c from jobs outside
// it.
func (q *Queues) newCapBudget(b capBudget, c *job, free int) capBudget {
	for n := c.queue.node; n != nil; n = n.parent {
		if n.max == 0 {
			continue
		}
		rem := n.max - n.used - free
		for _, idx := range c.incoming {
			if s := &q.slots[idx]; s.owner != noJob && !n.contains(q.jobs[s.owner].queue.node) {
				rem--
			}
		}
		b = append(b, capRoom{n: n, rem: rem})
	}
	return b
}

// allows reports whether a slot of v fits the budget.
func (b capBudget) allows(v *job) bool {
	for _, r := range b {
		if r.rem <= 0 && !r.n.contains(v.queue.node) {
			return false
		}
	}
	return true
}

// take counts a slot of v taken.
func (b capBudget) take(v *job) {
	for i := range b {
		if !b[i].n.contains(v.queue.node) {
			b[i].rem--
		}
	}
}

// contains reports whether x is n or in n's subtree.
func (n *qnode) contains(x *qnode) bool {
	for ; x != nil; x = x.parent {
		if x == n {
			return true
		}
	}
	return false
}

// heldUnderCap counts the slots held under the queue of j's that leaves
// j the least room (its maxSlots), but for j's own: what a claim for j
// could take without changing what that queue holds.
func (q *Queues) heldUnderCap(j *job) int {
	var bind *qnode
	for n := j.queue.node; n != nil; n = n.parent {
		if n.max > 0 && (bind == nil || n.max-n.used < bind.max-bind.used) {
			bind = n
		}
	}
	if bind == nil {
		return 0
	}
	return bind.used - j.granted - len(j.reserved)
}

// sumInts adds up the numbers.
func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// freeFor is how many free slots the jobs of qu may take: the free
// slots, within the room its queues' maxima leave.
func (q *Queues) freeFor(qu *queue) int {
	return min(q.nFree, q.room(qu))
}
