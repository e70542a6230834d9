// Package rbtree provides an intrusive red-black tree: the items carry
// their own links (a Node per tree they may be in), so that putting an
// item in costs no allocation, taking it out needs no search, and a
// search compares items directly, with no boxed key to follow.
//
// An item is put in with Insert(node, item), where node is the item's own
// Node for that tree, and taken out with Remove(node); a node is in at
// most one tree at a time, and the order of an item must not change while
// it is in (take it out, change it, put it back).
package rbtree

// Node links an item into a tree. The zero value is a node in no tree.
type Node[T any] struct {
	left, right, parent *Node[T]
	item                T
	red                 bool
}

// Item returns the item the node links.
func (n *Node[T]) Item() T { return n.item }

// Next returns the node after n in the tree's order, or nil.
func (n *Node[T]) Next() *Node[T] {
	if n.right != nil {
		n = n.right
		for n.left != nil {
			n = n.left
		}
		return n
	}
	for n.parent != nil && n == n.parent.right {
		n = n.parent
	}
	return n.parent
}

// Prev returns the node before n in the tree's order, or nil.
func (n *Node[T]) Prev() *Node[T] {
	if n.left != nil {
		n = n.left
		for n.right != nil {
			n = n.right
		}
		return n
	}
	for n.parent != nil && n == n.parent.left {
		n = n.parent
	}
	return n.parent
}

// Tree is a red-black tree of items in the order of its comparator.
// Create one with New; the zero value is not usable.
type Tree[T any] struct {
	root  *Node[T]
	first *Node[T] // the leftmost node: First in O(1)
	n     int
	cmp   func(a, b T) int
}

// New returns an empty tree ordered by cmp (negative: a comes first).
func New[T any](cmp func(a, b T) int) *Tree[T] { return &Tree[T]{cmp: cmp} }

// Len returns the number of items in the tree.
func (t *Tree[T]) Len() int { return t.n }

// First returns the node of the first item, or nil if the tree is empty.
// Cost O(1).
func (t *Tree[T]) First() *Node[T] { return t.first }

// Last returns the node of the last item, or nil if the tree is empty.
func (t *Tree[T]) Last() *Node[T] {
	n := t.root
	if n == nil {
		return nil
	}
	for n.right != nil {
		n = n.right
	}
	return n
}

// Search returns the node of the first item for which after holds, or
// nil: after must be false for the items before some point of the order
// and true from there on. Cost O(log n).
func (t *Tree[T]) Search(after func(T) bool) *Node[T] {
	var found *Node[T]
	for n := t.root; n != nil; {
		if after(n.item) {
			found, n = n, n.left
		} else {
			n = n.right
		}
	}
	return found
}

// Insert puts item in the tree, linked by n (which must be in no tree),
// after the items equal to it. Cost O(log n).
func (t *Tree[T]) Insert(n *Node[T], item T) {
	*n = Node[T]{item: item, red: true}
	link := &t.root
	leftmost := true
	for *link != nil {
		n.parent = *link
		if t.cmp(item, n.parent.item) < 0 {
			link = &n.parent.left
		} else {
			link = &n.parent.right
			leftmost = false
		}
	}
	*link = n
	if leftmost {
		t.first = n
	}
	t.n++
	t.insertFixup(n)
}

// insertFixup restores the colors' rules after z, red, was linked in.
func (t *Tree[T]) insertFixup(z *Node[T]) {
	for z.parent != nil && z.parent.red {
		p := z.parent
		g := p.parent // p is red, so not the root
		if p == g.left {
			if u := g.right; u != nil && u.red {
				p.red, u.red, g.red = false, false, true
				z = g
				continue
			}
			if z == p.right {
				t.rotateLeft(p)
				z, p = p, z
			}
			p.red, g.red = false, true
			t.rotateRight(g)
		} else {
			if u := g.left; u != nil && u.red {
				p.red, u.red, g.red = false, false, true
				z = g
				continue
			}
			if z == p.left {
				t.rotateRight(p)
				z, p = p, z
			}
			p.red, g.red = false, true
			t.rotateLeft(g)
		}
	}
	t.root.red = false
}

// Remove takes n's item out of the tree (n must be in it). Cost O(log n),
// without comparisons.
func (t *Tree[T]) Remove(n *Node[T]) {
	if n == t.first {
		t.first = n.Next()
	}
	var x, xParent *Node[T] // what takes the removed color's place, and its parent
	removedRed := n.red
	switch {
	case n.left == nil:
		x, xParent = n.right, n.parent
		t.transplant(n, n.right)
	case n.right == nil:
		x, xParent = n.left, n.parent
		t.transplant(n, n.left)
	default:
		// n's successor y, which has no left child, takes n's place.
		y := n.right
		for y.left != nil {
			y = y.left
		}
		removedRed = y.red
		x = y.right
		if y.parent == n {
			xParent = y
		} else {
			xParent = y.parent
			t.transplant(y, y.right)
			y.right = n.right
			y.right.parent = y
		}
		t.transplant(n, y)
		y.left = n.left
		y.left.parent = y
		y.red = n.red
	}
	t.n--
	*n = Node[T]{}
	if !removedRed {
		t.removeFixup(x, xParent)
	}
}

// removeFixup restores the colors' rules after a black node was taken
// out above x (nil: a leaf), a child of p.
func (t *Tree[T]) removeFixup(x, p *Node[T]) {
	for x != t.root && !isRed(x) {
		// x's side has one black node fewer than its sibling's, so the
		// sibling w exists (and p.left is nil only if x is that nil).
		if x == p.left {
			w := p.right
			if w.red {
				w.red, p.red = false, true
				t.rotateLeft(p)
				w = p.right
			}
			if !isRed(w.left) && !isRed(w.right) {
				w.red = true
				x, p = p, p.parent
				continue
			}
			if !isRed(w.right) {
				w.left.red, w.red = false, true
				t.rotateRight(w)
				w = p.right
			}
			w.red, p.red, w.right.red = p.red, false, false
			t.rotateLeft(p)
			x = t.root
		} else {
			w := p.left
			if w.red {
				w.red, p.red = false, true
				t.rotateRight(p)
				w = p.left
			}
			if !isRed(w.left) && !isRed(w.right) {
				w.red = true
				x, p = p, p.parent
				continue
			}
			if !isRed(w.left) {
				w.right.red, w.red = false, true
				t.rotateLeft(w)
				w = p.left
			}
			w.red, p.red, w.left.red = p.red, false, false
			t.rotateRight(p)
			x = t.root
		}
	}
	if x != nil {
		x.red = false
	}
}

func isRed[T any](n *Node[T]) bool { return n != nil && n.red }

// transplant puts v (nil: nothing) where u is in the tree.
func (t *Tree[T]) transplant(u, v *Node[T]) {
	switch {
	case u.parent == nil:
		t.root = v
	case u == u.parent.left:
		u.parent.left = v
	default:
		u.parent.right = v
	}
	if v != nil {
		v.parent = u.parent
	}
}

func (t *Tree[T]) rotateLeft(x *Node[T]) {
	y := x.right
	x.right = y.left
	if y.left != nil {
		y.left.parent = x
	}
	t.transplant(x, y)
	y.left = x
	x.parent = y
}

func (t *Tree[T]) rotateRight(x *Node[T]) {
	y := x.left
	x.left = y.right
	if y.right != nil {
		y.right.parent = x
	}
	t.transplant(x, y)
	y.right = x
	x.parent = y
}
