// Package heap provides a binary min-heap of values of any type, ordered
// by a less function, with an optional callback that tells each value
// where it moved so that it can later be removed from the middle.
//
// Unlike container/heap it stores values of the element type directly: no
// interface dispatch to Len, Less and Swap, and no boxing of every pushed
// and popped value into an `any`, which would cost an allocation per
// value for non-pointer types.
package heap

// Heap is a binary min-heap: Pop returns a value x such that no other
// value y has less(y, x). Values that compare equal leave in no
// particular order; give less a tie-breaker for a deterministic order.
// Create one with New; the zero value is not usable.
type Heap[T any] struct {
	items []T
	less  func(a, b T) bool
	moved func(x T, i int)
}

// New returns an empty heap ordered by less. If moved is not nil, it is
// called with every value the heap places at a position i, whenever it
// does (push, pop, removal of another value), and with i = -1 when the
// value leaves the heap: a value that records i can be removed with
// Remove(i) later, as a cancellable timer does.
func New[T any](less func(a, b T) bool, moved func(x T, i int)) *Heap[T] {
	return &Heap[T]{less: less, moved: moved}
}

// Len returns the number of values in the heap.
func (h *Heap[T]) Len() int { return len(h.items) }

// Min returns the smallest value without removing it; the heap must not
// be empty.
func (h *Heap[T]) Min() T { return h.items[0] }

// Push adds x. Cost O(log n).
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	h.up(len(h.items)-1, 0, x)
}

// Pop removes and returns the smallest value; the heap must not be empty.
// Cost O(log n).
func (h *Heap[T]) Pop() T { return h.Remove(0) }

// Remove removes and returns the value at position i, as last reported to
// moved. Cost O(log n).
func (h *Heap[T]) Remove(i int) T {
	x := h.items[i]
	last := len(h.items) - 1
	y := h.items[last]
	var zero T
	h.items[last] = zero // let the garbage collector have what it pointed to
	h.items = h.items[:last]
	if i < last {
		// y from the end fills the hole at i: up if it is less than the
		// parent of i, else down.
		if i > 0 && h.less(y, h.items[(i-1)/2]) {
			h.up(i, 0, y)
		} else {
			h.down(i, y)
		}
	}
	if h.moved != nil {
		h.moved(x, -1)
	}
	return x
}

// Fix restores the order after the value at position i (as last reported
// to moved) changed how it compares. Cost O(log n).
func (h *Heap[T]) Fix(i int) {
	x := h.items[i]
	if i > 0 && h.less(x, h.items[(i-1)/2]) {
		h.up(i, 0, x)
	} else {
		h.down(i, x)
	}
}

// up moves the hole at position i towards position top (an ancestor of
// i, 0 for the root) until x may be placed in it, and places x.
func (h *Heap[T]) up(i, top int, x T) {
	for i > top {
		p := (i - 1) / 2
		if !h.less(x, h.items[p]) {
			break
		}
		h.place(i, h.items[p])
		i = p
	}
	h.place(i, x)
}

// down moves the hole at position i towards the leaves until x may be
// placed in it, and places x. It is Floyd's bottom-up variant: the hole
// first sinks to a leaf along the smaller children (one comparison per
// level), then x, which came from the end and usually belongs near the
// bottom, rises from there; about half the comparisons of the textbook
// sift-down, which matters since less is not inlined.
func (h *Heap[T]) down(i int, x T) {
	n := len(h.items)
	top := i
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			m = r
		}
		h.place(i, h.items[m])
		i = m
	}
	h.up(i, top, x)
}

func (h *Heap[T]) place(i int, x T) {
	h.items[i] = x
	if h.moved != nil {
		h.moved(x, i)
	}
}
