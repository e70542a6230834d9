package region

import (
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/topology"
)

// markNeverFinishing records which job vertices never finish: the
// unbounded ones and, transitively, every vertex that reads one of them
// through an edge whose consumers run beside their producers (runsBeside:
// a task cannot finish before its pipelined or hybrid producers, so it
// runs and holds its slot forever). It allocates nothing for a job
// without unbounded vertices.
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
			if src, _ := job.EdgeEnds(e); rs.never[src] && rs.runsBeside(e) {
				never = true
				break
			}
		}
		rs.never[jv] = never
	}
}

// runsBeside reports whether the consumers of job edge e run beside its
// producers when these never finish (and so never finish either):
// pipelined and full hybrid edges (a full hybrid consumer starts once its
// producers are deployed), and a selective hybrid edge whose every
// consumer reads partitions of its own region only (its region waits for
// no share of them). A blocking consumer, and a selective one with a
// producer in another region, waits for finished producers and never
// starts (blockedForever).
func (rs *Regions) runsBeside(e topology.JobEdgeID) bool {
	switch pt := rs.topo.PartitionType(e); {
	case pt.IsPipelined() || pt == exchange.HybridFull:
		return true
	case pt != exchange.HybridSelective:
		return false
	}
	gs := rs.topo.GroupsOf(e)
	for g := gs.Start; g < gs.End; g++ {
		ps, cs := rs.groupProducers.Row(g), rs.groupConsumers.Row(g)
		if len(ps) != 1 || len(cs) != 1 || cs[0] != ps[0] {
			return false
		}
	}
	return true
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
