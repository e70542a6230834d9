package resource

// flow is a small min-cost max-flow network (successive shortest paths with
// Bellman-Ford), used on graphs of distinct profiles, which are tiny.
type flow struct {
	head []int
	to   []int
	next []int
	cap  []int
	cost []int
}

func newFlow(nodes int) *flow {
	h := make([]int, nodes)
	for i := range h {
		h[i] = -1
	}
	return &flow{head: h}
}

// addEdge adds u->v and its residual twin; it returns the forward edge index.
func (f *flow) addEdge(u, v, c, w int) int {
	e := len(f.to)
	f.to = append(f.to, v, u)
	f.cap = append(f.cap, c, 0)
	f.cost = append(f.cost, w, -w)
	f.next = append(f.next, f.head[u], f.head[v])
	f.head[u], f.head[v] = e, e+1
	return e
}

// flowOn returns the flow pushed along forward edge e.
func (f *flow) flowOn(e int) int { return f.cap[e+1] }

func (f *flow) minCostMaxFlow(s, t int) int {
	n := len(f.head)
	const inf = int(^uint(0) >> 2)
	dist := make([]int, n)
	prev := make([]int, n)
	inQueue := make([]bool, n)
	total := 0
	for {
		for i := range dist {
			dist[i], prev[i] = inf, -1
		}
		dist[s] = 0
		queue := []int{s}
		inQueue[s] = true
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			inQueue[u] = false
			for e := f.head[u]; e >= 0; e = f.next[e] {
				if f.cap[e] > 0 && dist[u]+f.cost[e] < dist[f.to[e]] {
					v := f.to[e]
					dist[v] = dist[u] + f.cost[e]
					prev[v] = e
					if !inQueue[v] {
						inQueue[v] = true
						queue = append(queue, v)
					}
				}
			}
		}
		if dist[t] == inf {
			return total
		}
		push := inf
		for v := t; v != s; v = f.to[prev[v]^1] {
			push = min(push, f.cap[prev[v]])
		}
		for v := t; v != s; v = f.to[prev[v]^1] {
			f.cap[prev[v]] -= push
			f.cap[prev[v]^1] += push
		}
		total += push
	}
}
