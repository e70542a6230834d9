// Package graphview holds the small pieces needed to present one of
// regionsched's own graphs to gonum's graph algorithms and encoders
// through gonum's interfaces (graph.Node, graph.Edge, graph.Nodes), as
// gonum advises: algorithms work on interfaces, not on representations.
//
// It replaces gonum.org/v1/gonum/graph/simple outside tests: that package
// brings in gonum's matrix, LAPACK and BLAS packages, which made the first
// build of the command take minutes. This package imports only
// gonum.org/v1/gonum/graph.
package graphview

import "gonum.org/v1/gonum/graph"

// Node is a graph node that is nothing but its id.
type Node int64

// ID returns the node's id.
func (n Node) ID() int64 { return int64(n) }

// Edge is a directed edge between two nodes.
type Edge struct {
	F, T graph.Node
}

// From returns the node the edge leaves.
func (e Edge) From() graph.Node { return e.F }

// To returns the node the edge enters.
func (e Edge) To() graph.Node { return e.T }

// ReversedEdge returns the edge with its ends swapped.
func (e Edge) ReversedEdge() graph.Edge { return Edge{F: e.T, T: e.F} }

// IDs iterates over a list of node ids, yielding each as a Node. The zero
// value is an empty iterator.
type IDs[T ~int32 | ~int64] struct {
	ids []T
	pos int
}

// NewIDs returns an iterator over ids (aliased, not copied).
func NewIDs[T ~int32 | ~int64](ids []T) *IDs[T] { return &IDs[T]{ids: ids} }

// Next advances to the next node and reports whether there is one.
func (it *IDs[T]) Next() bool {
	if it.pos >= len(it.ids) {
		it.pos = len(it.ids) + 1 // past the end: Node is nil
		return false
	}
	it.pos++
	return true
}

// Len returns the number of nodes not yet reached by Next.
func (it *IDs[T]) Len() int { return max(len(it.ids)-it.pos, 0) }

// Reset returns the iterator to its start.
func (it *IDs[T]) Reset() { it.pos = 0 }

// Node returns the current node, or nil before the first or after the
// last call to Next.
func (it *IDs[T]) Node() graph.Node {
	if it.pos == 0 || it.pos > len(it.ids) {
		return nil
	}
	return Node(it.ids[it.pos-1])
}

// Range iterates over the nodes 0, 1, ..., n-1.
type Range struct {
	n, pos int64
}

// NewRange returns an iterator over the nodes 0 ... n-1.
func NewRange(n int) *Range { return &Range{n: int64(max(n, 0))} }

// Next advances to the next node and reports whether there is one.
func (it *Range) Next() bool {
	if it.pos >= it.n {
		it.pos = it.n + 1 // past the end: Node is nil
		return false
	}
	it.pos++
	return true
}

// Len returns the number of nodes not yet reached by Next.
func (it *Range) Len() int { return int(max(it.n-it.pos, 0)) }

// Reset returns the iterator to its start.
func (it *Range) Reset() { it.pos = 0 }

// Node returns the current node, or nil before the first or after the
// last call to Next.
func (it *Range) Node() graph.Node {
	if it.pos == 0 || it.pos > it.n {
		return nil
	}
	return Node(it.pos - 1)
}

// Slice iterates over a slice of nodes of any type (nodes that carry
// attributes, say). It is a graph.NodeSlicer, so graph.NodesOf copies the
// slice at once.
type Slice struct {
	nodes []graph.Node
	pos   int
}

// NewSlice returns an iterator over nodes (aliased, not copied).
func NewSlice(nodes []graph.Node) *Slice { return &Slice{nodes: nodes} }

// Next advances to the next node and reports whether there is one.
func (it *Slice) Next() bool {
	if it.pos >= len(it.nodes) {
		it.pos = len(it.nodes) + 1 // past the end: Node is nil
		return false
	}
	it.pos++
	return true
}

// Len returns the number of nodes not yet reached by Next.
func (it *Slice) Len() int { return max(len(it.nodes)-it.pos, 0) }

// Reset returns the iterator to its start.
func (it *Slice) Reset() { it.pos = 0 }

// Node returns the current node, or nil before the first or after the
// last call to Next.
func (it *Slice) Node() graph.Node {
	if it.pos == 0 || it.pos > len(it.nodes) {
		return nil
	}
	return it.nodes[it.pos-1]
}

// NodeSlice returns the nodes not yet reached by Next, as a new slice.
func (it *Slice) NodeSlice() []graph.Node {
	rest := append([]graph.Node(nil), it.nodes[min(it.pos, len(it.nodes)):]...)
	it.pos = len(it.nodes) + 1
	return rest
}
