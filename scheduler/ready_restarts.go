package scheduler

import (
	"iter"
	"slices"
)

// Restarts reports whether a failover of rd restarts region r.
func (rd *Ready) Restarts(r RegionID) bool {
	return slices.ContainsFunc(rd.Restarted, func(x Restart) bool { return slices.Contains(x.Regions, r) })
}

// EndedRequests returns, in rd's order, the requests of rd that a
// failover of rd ended: a region may ask and restart within one Ready
// (a runtime of several jobs applies every input of an instant before
// its Ready), and then no longer waits for slots. waiting lists the
// regions that do (Status().Waiting, after rd). A runtime that traces
// requests withdraws these right after them. Speculative requests are
// never among them. Nil when rd restarts nothing.
func (rd *Ready) EndedRequests(waiting []RegionID) []Request {
	var out []Request
	for _, req := range rd.Requests {
		if !req.Speculative && !slices.Contains(waiting, req.Region) && rd.Restarts(req.Region) {
			out = append(out, req)
		}
	}
	return out
}

// EndedTasks yields the tasks of EndedRequests(waiting), in rd's order,
// each with the attempt its request asked for: the requests a runtime
// that traces them withdraws.
func (rd *Ready) EndedTasks(waiting []RegionID) iter.Seq2[TaskID, Attempt] {
	return func(yield func(TaskID, Attempt) bool) {
		for _, req := range rd.EndedRequests(waiting) {
			for _, s := range req.Slots {
				for _, v := range s.Members {
					if !yield(v, req.Attempt) {
						return
					}
				}
			}
		}
	}
}
