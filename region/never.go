package region

import (
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

// markNeverFinishing records which job vertices never finish: the
// unbounded ones and, transitively, every vertex that reads one of them
// through a pipelined or a full hybrid edge (a task cannot finish before
// its pipelined or hybrid producers; a full hybrid consumer starts once
// its producers are deployed, so it runs and holds its slot forever). A
// selective hybrid consumer of one never starts: it waits for a share of
// its producers to finish (blockedForever). It allocates nothing for a
// job without unbounded vertices.
func (rs *Regions) markNeverFinishing() {
	job := rs.topo.Job()
	any := false
	for jv := range topology.JobVertexID(job.NumVertices()) {
		if job.Vertex(jv).Unbounded {
			any = true
			break
		}
	}
	if !any {
		return
	}
	rs.never = make([]bool, job.NumVertices())
	for _, jv := range job.TopologicalOrder() {
		never := job.Vertex(jv).Unbounded
		for _, e := range job.InEdges(jv) {
			if src, _ := job.EdgeEnds(e); rs.never[src] && runsBeside(rs.topo.PartitionType(e)) {
				never = true
				break
			}
		}
		rs.never[jv] = never
	}
}

// runsBeside reports whether a consumer through an edge of partition type
// pt runs beside a producer that never finishes, and never finishes
// either: pipelined and full hybrid edges; a blocking or selective hybrid
// consumer waits for finished producers and never starts.
func runsBeside(pt exchange.ResultPartitionType) bool {
	return pt.IsPipelined() || pt == exchange.HybridFull
}

// NeverFinishes reports whether the subtasks of job vertex jv never
// finish: jv is unbounded, or reads an unbounded vertex through pipelined
// or full hybrid edges, directly or through other such vertices. Such a subtask holds its
// slot forever, and so does every slot it shares (Slot.Unbounded). An
// index out of range reports false.
func (rs *Regions) NeverFinishes(jv topology.JobVertexID) bool {
	return jv >= 0 && int(jv) < len(rs.never) && rs.never[jv]
}

// neverFinishing lists, ascending, the execution vertices that never
// finish (see NeverFinishes).
func (rs *Regions) neverFinishing() []topology.ExecutionVertexID {
	var out []topology.ExecutionVertexID
	for jv, never := range rs.never {
		if never {
			vs := rs.topo.VerticesOf(topology.JobVertexID(jv))
			for v := vs.Start; v < vs.End; v++ {
				out = append(out, topology.ExecutionVertexID(v))
			}
		}
	}
	return out
}
