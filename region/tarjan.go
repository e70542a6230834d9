package region

import "github.com/regionsched/regionsched/internal/csr"

// stronglyConnected labels every node of directed graph g with the id of
// its strongly connected component (iterative Tarjan, O(nodes + arcs),
// no recursion). Components are numbered in the order Tarjan closes them.
func stronglyConnected(g csr.CSR[int32]) (comp []int32, count int32) {
	n := g.Rows()
	const unvisited = -1
	index := make([]int32, n)
	low := make([]int32, n)
	comp = make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = unvisited
		comp[i] = -1
	}
	var stack []int32 // Tarjan's node stack
	type frame struct {
		node int32
		next int32 // position in the node's out list
	}
	var calls []frame
	next := int32(0)
	for root := int32(0); root < int32(n); root++ {
		if index[root] != unvisited {
			continue
		}
		calls = append(calls, frame{node: root})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			succ := g.Row(f.node)
			if int(f.next) < len(succ) {
				w := succ[f.next]
				f.next++
				switch {
				case index[w] == unvisited:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{node: w})
				case onStack[w]:
					low[f.node] = min(low[f.node], index[w])
				}
				continue
			}
			v := f.node
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				parent := calls[len(calls)-1].node
				low[parent] = min(low[parent], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = count
					if w == v {
						break
					}
				}
				count++
			}
		}
	}
	return comp, count
}
