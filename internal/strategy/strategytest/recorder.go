package strategytest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/regionsched/regionsched/internal/strategy"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Recorder is the recording fake for tests. It has the calls of
// strategy.Strategy that a runtime makes (Start, UpdateState,
// MarkDeploying, RegionsToRestart, Restart) with the same signatures, forwards each to
// the wrapped Strategy, and records it with what it returned. A scheduler
// that depends on an interface of those methods can be tested with a
// Recorder in place of the Strategy, then assert on Steps, Deployed,
// Released or String.
type Recorder struct {
	s     *strategy.Strategy
	steps []Step
}

// Step is one recorded call.
type Step struct {
	// Call describes the call, with vertices by name: "start",
	// "A#0 finished", "A#0@1 running" (attempt 1), "regions to restart
	// for B#0 lost [A#1->B]", "restart {A#1} {B#0}".
	Call string
	// Decisions is what Start, UpdateState, MarkDeploying or Restart
	// returned.
	Decisions strategy.Decisions
	// Restart is what RegionsToRestart returned.
	Restart []region.ID
	// Deploying is what MarkDeploying returned: the members it made
	// deploying.
	Deploying int
	// Err is the error the call returned.
	Err error
}

// NewRecorder wraps s.
func NewRecorder(s *strategy.Strategy) *Recorder { return &Recorder{s: s} }

// Strategy returns the wrapped strategy.
func (r *Recorder) Strategy() *strategy.Strategy { return r.s }

// Start forwards to Strategy.Start and records the call.
func (r *Recorder) Start() (strategy.Decisions, error) {
	d, err := r.s.Start()
	r.steps = append(r.steps, Step{Call: "start", Decisions: clone(d), Err: err})
	return d, err
}

// UpdateState forwards to Strategy.UpdateState and records the call.
func (r *Recorder) UpdateState(v topology.ExecutionVertexID, attempt strategy.Attempt, to strategy.ExecutionState) (strategy.Decisions, error) {
	d, err := r.s.UpdateState(v, attempt, to)
	r.steps = append(r.steps, Step{Call: r.vertexName(v, attempt) + " " + to.String(), Decisions: clone(d), Err: err})
	return d, err
}

// Report is UpdateState for the vertex named name ("A#0") in the current
// attempt of its region. A name that does not parse returns the
// topology's error.
func (r *Recorder) Report(name string, to strategy.ExecutionState) (strategy.Decisions, error) {
	v, err := r.topo().ParseVertexName(name)
	var st strategy.VertexStatus
	if err == nil {
		st, err = r.s.Vertex(v)
	}
	if err != nil {
		r.steps = append(r.steps, Step{Call: name + " " + to.String(), Err: err})
		return strategy.Decisions{}, err
	}
	return r.UpdateState(v, st.Attempt, to)
}

// RegionsToRestart forwards to Strategy.RegionsToRestart and records the call.
func (r *Recorder) RegionsToRestart(failed topology.ExecutionVertexID, lost ...topology.ResultPartitionID) ([]region.ID, error) {
	regions, err := r.s.RegionsToRestart(failed, lost...)
	call := "regions to restart for " + r.vertexName(failed, -1)
	if len(lost) > 0 {
		call += " lost " + r.partitionNames(lost)
	}
	r.steps = append(r.steps, Step{Call: call, Restart: regions, Err: err})
	return regions, err
}

// MarkDeploying forwards to Strategy.MarkDeploying and records the call.
func (r *Recorder) MarkDeploying(id region.ID) (int, strategy.Decisions, error) {
	n, d, err := r.s.MarkDeploying(id)
	r.steps = append(r.steps, Step{Call: "deploying " + r.regionName(id), Deploying: n, Decisions: clone(d), Err: err})
	return n, d, err
}

// Restart forwards to Strategy.Restart and records the call.
func (r *Recorder) Restart(regions []region.ID) (strategy.Decisions, error) {
	d, err := r.s.Restart(regions)
	r.steps = append(r.steps, Step{Call: "restart " + r.regionNames(regions), Decisions: clone(d), Err: err})
	return d, err
}

// clone copies d: its slices are valid only until the strategy's next
// call.
func clone(d strategy.Decisions) strategy.Decisions {
	return strategy.Decisions{Deploy: slices.Clone(d.Deploy), Release: slices.Clone(d.Release)}
}

// Steps returns the recorded calls in order (read-only).
func (r *Recorder) Steps() []Step { return r.steps }

// Deployed returns every deployment decided so far, in order.
func (r *Recorder) Deployed() []strategy.Deployment {
	var out []strategy.Deployment
	for _, s := range r.steps {
		out = append(out, s.Decisions.Deploy...)
	}
	return out
}

// Released returns every partition released so far, in order.
func (r *Recorder) Released() []topology.ResultPartitionID {
	var out []topology.ResultPartitionID
	for _, s := range r.steps {
		out = append(out, s.Decisions.Release...)
	}
	return out
}

// String renders one line per step, regions as their members by name and
// partitions as producer->consumer vertex, e.g.
//
//	start: deploy {A#0} {A#1}
//	deploying {A#0}: 1 member
//	deploying {B#0}: 1 member; deploy {C#0} {C#1}  (C reads B through a hybrid exchange)
//	B#0 finished: deploy {C#0} {C#1}; release A#0->B
//	regions to restart for C#0: {C#0} {D#0} {D#1}
//	restart {C#0} {D#0} {D#1}: deploy {C#0}@1
func (r *Recorder) String() string {
	var b strings.Builder
	for _, s := range r.steps {
		b.WriteString(s.Call)
		b.WriteString(":")
		switch {
		case s.Err != nil:
			b.WriteString(" error: " + s.Err.Error())
		case s.Restart != nil:
			b.WriteString(" " + r.regionNames(s.Restart))
		case s.Deploying == 0 && s.Decisions.IsEmpty():
			b.WriteString(" -")
		default:
			var parts []string
			if s.Deploying > 0 {
				member := fmt.Sprintf("%d member", s.Deploying)
				if s.Deploying > 1 {
					member += "s"
				}
				parts = append(parts, member)
			}
			if len(s.Decisions.Deploy) > 0 {
				var ds []string
				for _, d := range s.Decisions.Deploy {
					ds = append(ds, r.regionName(d.Region)+attemptSuffix(d.Attempt))
				}
				parts = append(parts, "deploy "+strings.Join(ds, " "))
			}
			if len(s.Decisions.Release) > 0 {
				parts = append(parts, "release "+strings.Trim(r.partitionNames(s.Decisions.Release), "[]"))
			}
			b.WriteString(" " + strings.Join(parts, "; "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (r *Recorder) topo() *topology.ExecutionTopology { return r.s.Regions().Topology() }

// vertexName is "A#0", with "@attempt" for attempts after the first;
// attempt < 0 means none.
func (r *Recorder) vertexName(v topology.ExecutionVertexID, attempt strategy.Attempt) string {
	t := r.topo()
	if v < 0 || int(v) >= t.NumExecutionVertices() {
		return fmt.Sprintf("vertex(%d)", v)
	}
	return t.VertexName(v) + attemptSuffix(attempt)
}

func attemptSuffix(a strategy.Attempt) string {
	if a <= 0 {
		return ""
	}
	return fmt.Sprintf("@%d", a)
}

// regionName is "{A#0 B#0}".
func (r *Recorder) regionName(id region.ID) string {
	rs := r.s.Regions()
	if id < 0 || int(id) >= rs.NumRegions() {
		return fmt.Sprintf("region(%d)", id)
	}
	var names []string
	for _, v := range rs.Members(id) {
		names = append(names, rs.Topology().VertexName(v))
	}
	return "{" + strings.Join(names, " ") + "}"
}

func (r *Recorder) regionNames(ids []region.ID) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = r.regionName(id)
	}
	return strings.Join(names, " ")
}

// partitionNames is "[A#0->B C#1->D]": producer subtask -> consumer job vertex.
func (r *Recorder) partitionNames(ps []topology.ResultPartitionID) string {
	t := r.topo()
	names := make([]string, len(ps))
	for i, p := range ps {
		if p < 0 || int(p) >= t.NumPartitions() {
			names[i] = fmt.Sprintf("partition(%d)", p)
			continue
		}
		_, target := t.Job().EdgeEnds(t.EdgeOfPartition(p))
		names[i] = t.VertexName(t.PartitionProducer(p)) + "->" + t.Job().Vertex(target).ID
	}
	return "[" + strings.Join(names, " ") + "]"
}
