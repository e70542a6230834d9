package timeline

import "github.com/regionsched/regionsched/runfile"

// colorStats is what the colours of a timeline depend on, gathered from
// its events one at a time: the regions deployed, and the job vertices
// and jobs in order of appearance with their deploys. It grows with the
// job (its vertices, its jobs), not with the trace.
type colorStats struct {
	regions  int       // the largest region deployed, plus 1
	vertices nameTable // job vertices of deployed tasks
	jobs     nameTable // jobs of deployed tasks and of requests
}

// nameTable numbers names in order of appearance and counts them.
type nameTable struct {
	index  map[string]int
	names  []string
	counts []int
}

// id returns the number of name, adding it if new.
func (t *nameTable) id(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[name] = len(t.names)
	t.names = append(t.names, name)
	t.counts = append(t.counts, 0)
	return len(t.names) - 1
}

// observe takes one event into account, as newColorKeys reads them: a
// deploy counts its region, job vertex and job; a request names its job.
func (s *colorStats) observe(e runfile.Event) {
	switch e.Kind {
	case runfile.Deploy:
		s.regions = max(s.regions, e.Region+1)
		s.vertices.counts[s.vertices.id(vertexOf(e.Task))]++
		s.jobs.counts[s.jobs.id(e.Job)]++
	case runfile.Request:
		s.jobs.id(e.Job)
	}
}
