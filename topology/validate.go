package topology

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jsontext"
)

// index validates g and fills its lookup tables.
func (g *JobGraph) index() error {
	if len(g.vertices) == 0 {
		return fmt.Errorf("job %q: %w", g.name, ErrEmptyJob)
	}
	g.byID = make(map[string]JobVertexID, len(g.vertices))
	total := 0
	for i, v := range g.vertices {
		if err := validateVertex(i, v); err != nil {
			return err
		}
		if first, dup := g.byID[v.ID]; dup {
			return &VertexError{Vertex: v.ID, Index: i, Field: "id", Err: ErrDuplicateVertex,
				Detail: fmt.Sprintf("already declared as vertices[%d]", first)}
		}
		g.byID[v.ID] = JobVertexID(i)
		total += v.Parallelism
	}
	if total > math.MaxInt32 {
		return fmt.Errorf("%w: %d subtasks (at most %d)", ErrTooLarge, total, math.MaxInt32)
	}
	n := len(g.vertices)
	g.edgeSource = make([]int32, len(g.edges))
	g.edgeTarget = make([]int32, len(g.edges))
	g.inEdges = make([][]JobEdgeID, n)
	g.outEdges = make([][]JobEdgeID, n)
	partitions := 0
	for i, e := range g.edges {
		s, t, err := g.validateEdge(i, e)
		if err != nil {
			return err
		}
		g.edgeSource[i], g.edgeTarget[i] = int32(s), int32(t)
		g.outEdges[s] = append(g.outEdges[s], JobEdgeID(i))
		g.inEdges[t] = append(g.inEdges[t], JobEdgeID(i))
		partitions += g.vertices[s].Parallelism
	}
	if partitions > math.MaxInt32 {
		return fmt.Errorf("%w: %d result partitions (at most %d)", ErrTooLarge, partitions, math.MaxInt32)
	}
	if err := validateSubmission(g.submission); err != nil {
		return err
	}
	return g.sortTopologically()
}

func validateVertex(i int, v JobVertex) error {
	switch {
	case v.ID == "":
		return &VertexError{Vertex: v.ID, Index: i, Field: "id", Err: ErrInvalidVertexID, Detail: "empty"}
	case strings.Contains(v.ID, "#"):
		return &VertexError{Vertex: v.ID, Index: i, Field: "id", Err: ErrInvalidVertexID, Detail: "contains '#'"}
	case strings.IndexFunc(v.ID, unicode.IsSpace) >= 0:
		return &VertexError{Vertex: v.ID, Index: i, Field: "id", Err: ErrInvalidVertexID, Detail: "contains whitespace"}
	case v.Parallelism < 1 || v.Parallelism > MaxParallelism:
		return &VertexError{Vertex: v.ID, Index: i, Field: "parallelism", Err: ErrInvalidParallelism,
			Detail: fmt.Sprintf("%d is not in 1 ... %d", v.Parallelism, MaxParallelism)}
	case v.Duration < 0:
		return &VertexError{Vertex: v.ID, Index: i, Field: "durationMs", Err: ErrInvalidField,
			Detail: fmt.Sprintf("%d ms is negative", v.Duration.Milliseconds())}
	}
	return nil
}

func (g *JobGraph) validateEdge(i int, e JobEdge) (source, target JobVertexID, err error) {
	s, okS := g.byID[e.Source]
	t, okT := g.byID[e.Target]
	switch {
	case !okS:
		return 0, 0, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "source", Err: ErrUnknownVertex,
			Detail: fmt.Sprintf("no vertex %q", e.Source)}
	case !okT:
		return 0, 0, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "target", Err: ErrUnknownVertex,
			Detail: fmt.Sprintf("no vertex %q", e.Target)}
	case e.ShipStrategy > exchange.Broadcast:
		perr := &exchange.ParseError{Kind: exchange.ErrUnknownShipStrategy, Value: e.ShipStrategy.String(), Valid: exchange.ShipStrategyNames()}
		return 0, 0, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "shipStrategy", Err: perr}
	case e.Pinned && e.Exchange > exchange.HybridSelective:
		perr := &exchange.ParseError{Kind: exchange.ErrUnknownPartitionType, Value: e.Exchange.String(), Valid: exchange.PartitionTypeNames()}
		return 0, 0, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "exchange", Err: perr}
	case s == t:
		return 0, 0, &CycleError{Vertices: []string{e.Source}}
	}
	if e.ShipStrategy == exchange.Forward && g.vertices[s].Parallelism != g.vertices[t].Parallelism {
		return 0, 0, &EdgeError{Index: i, Source: e.Source, Target: e.Target, Field: "shipStrategy", Err: ErrForwardParallelism,
			Detail: fmt.Sprintf("%s has parallelism %d, %s has %d; use rescale, rebalance or hash",
				e.Source, g.vertices[s].Parallelism, e.Target, g.vertices[t].Parallelism)}
	}
	return s, t, nil
}

func validateSubmission(s Submission) error {
	bad := func(field, detail string) error {
		return &DecodeError{Field: field, Err: ErrInvalidField, Detail: detail}
	}
	switch {
	case s.SubmitAt < 0:
		return bad("submitAtMs", fmt.Sprintf("%d ms is negative (valid: %s)", s.SubmitAt.Milliseconds(), jsontext.MillisRange))
	case s.Priority < 1 || s.Priority > MaxPriority:
		return bad("priority", fmt.Sprintf("%d is not in 1 ... %d", s.Priority, MaxPriority))
	case !ValidQueueName(s.Queue):
		return &DecodeError{Field: "queue", Err: ErrInvalidQueueName, Detail: fmt.Sprintf("%q: %s", s.Queue, QueueNameRule)}
	case s.User == "":
		return bad("user", `must not be empty (leave it out for the default "anonymous")`)
	case s.Driver != nil && s.Driver.Startup < 0:
		return bad("driver.startupMs", fmt.Sprintf("%d ms is negative (valid: %s)", s.Driver.Startup.Milliseconds(), jsontext.MillisRange))
	case s.Gang != nil && s.Gang.MinSlots < 0:
		return bad("gang.minSlots", fmt.Sprintf("%d must be at least 1 (or absent: derived from the job)", s.Gang.MinSlots))
	case s.Gang != nil && s.Gang.Timeout < 0:
		return bad("gang.timeoutMs", fmt.Sprintf("%d ms is negative (valid: %s)", s.Gang.Timeout.Milliseconds(), jsontext.MillisRange))
	}
	return nil
}

// sortTopologically orders the vertices with gonum's stabilized
// topological sort (ties by declaration order), run on a view of the job
// graph (jobView), and turns a failure into a CycleError that names the
// vertices of one cycle.
func (g *JobGraph) sortTopologically() error {
	dg := newJobView(g)
	byID := func(nodes []graph.Node) {
		for i := 1; i < len(nodes); i++ { // insertion sort: ties are few and small
			for j := i; j > 0 && nodes[j].ID() < nodes[j-1].ID(); j-- {
				nodes[j], nodes[j-1] = nodes[j-1], nodes[j]
			}
		}
	}
	order, err := topo.SortStabilized(dg, byID)
	if err != nil {
		var cyc topo.Unorderable
		if errors.As(err, &cyc) && len(cyc) > 0 {
			return &CycleError{Vertices: g.traceCycle(cyc[0])}
		}
		return fmt.Errorf("%w: %v", ErrCycle, err)
	}
	g.topoOrder = make([]JobVertexID, len(order))
	g.topoRank = make([]int32, len(order))
	for i, n := range order {
		g.topoOrder[i] = JobVertexID(n.ID())
		g.topoRank[n.ID()] = int32(i)
	}
	return nil
}

// traceCycle walks one cycle inside a strongly connected component and
// returns its vertex ids in cycle order, starting at the smallest index.
func (g *JobGraph) traceCycle(scc []graph.Node) []string {
	in := make(map[int32]bool, len(scc))
	start := int32(math.MaxInt32)
	for _, n := range scc {
		in[int32(n.ID())] = true
		start = min(start, int32(n.ID()))
	}
	// BFS from start inside the component until an edge returns to start.
	prev := map[int32]int32{start: -1}
	queue := []int32{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range g.outEdges[u] {
			v := g.edgeTarget[e]
			if !in[v] {
				continue
			}
			if v == start {
				var path []string
				for x := u; x != -1; x = prev[x] {
					path = append(path, g.vertices[x].ID)
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			if _, seen := prev[v]; !seen {
				prev[v] = u
				queue = append(queue, v)
			}
		}
	}
	ids := make([]string, 0, len(scc))
	for _, n := range scc {
		ids = append(ids, g.vertices[n.ID()].ID)
	}
	return ids
}
