// Package regiontest lets a user prove in their own `go test` that a job
// graph cannot deadlock on a given cluster:
//
//	func TestNightlyETLIsDeadlockFree(t *testing.T) {
//		job := buildNightlyETL() // *topology.JobGraph, e.g. from topology.Decode
//		regiontest.AssertDeadlockFree(t, job, exchange.PointwisePipelinedOnly, regiontest.Slots(8))
//	}
//
// It checks twice: statically (region.Check: every region fits the
// cluster, counting slots held forever by unbounded tasks) and
// dynamically, by simulating the job on the cluster with the library's
// scheduler for many seeds (package simulator), each ending the tasks of a
// wave in another order (simulator.TiesSeeded). A failure message names
// the region that cannot be served and what it lacks, or the seed and the
// tasks that hold slots while waiting.
package regiontest

import (
	"fmt"
	"testing"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// DefaultSeeds is how many seeds Verify simulates unless told otherwise.
const DefaultSeeds = 20

// Slots returns a cluster of n unknown-sized slots (they fit any request).
func Slots(n int) []resource.Count {
	return []resource.Count{{Profile: resource.Unknown, N: n}}
}

// SizedSlots returns a cluster of n slots of one profile.
func SizedSlots(n int, p resource.Profile) []resource.Count {
	return []resource.Count{{Profile: p, N: n}}
}

// Option tunes Verify.
type Option func(*options)

type options struct {
	seeds    int
	matching resource.Matching
	failures []string
	share    float64
}

// Seeds sets how many seeds (1 ... n) are simulated; 0 skips simulation.
func Seeds(n int) Option { return func(o *options) { o.seeds = n } }

// ExactMatching serves a request only with a slot of exactly its profile.
func ExactMatching() Option { return func(o *options) { o.matching = resource.ExactMatch } }

// SelectiveShare sets the share of the producers of a selective hybrid
// input that must have finished before its consumer starts
// (strategy.WithSelectiveShare) in every simulated run; a share outside
// (0, 1] is reported as a Problem.
func SelectiveShare(share float64) Option { return func(o *options) { o.share = share } }

// Failures injects failures in every simulated run, as "ID#i@MS" (the
// first attempt of subtask ID#i fails after MS ms of progress): the job
// must still finish.
func Failures(specs ...string) Option {
	return func(o *options) { o.failures = append(o.failures, specs...) }
}

// Report is what Verify found.
type Report struct {
	// Static is the verdict of region.Check.
	Static region.Verdict
	// Runs holds one simulation result per seed (seed i+1 at index i).
	Runs []*simulator.Result
	// Problem explains why the job is not deadlock-free, "" if it is.
	Problem string
}

// DeadlockFree reports whether the static check and every run succeeded.
func (r Report) DeadlockFree() bool { return r.Problem == "" }

// Verify checks job in mode on cluster and reports. Bad options (an
// unparsable failure spec) are reported as a Problem.
func Verify(job *topology.JobGraph, mode exchange.Mode, cluster []resource.Count, opts ...Option) Report {
	o := options{seeds: DefaultSeeds}
	for _, opt := range opts {
		opt(&o)
	}
	rs := region.FromJob(job, mode)
	rep := Report{Static: rs.Check(cluster, o.matching)}
	where := fmt.Sprintf("job %q in mode %s on %s", job.Name(), mode, describeCluster(cluster))
	if !rep.Static.Runnable {
		rep.Problem = fmt.Sprintf("%s is not deadlock-free: not runnable: %s", where, rep.Static.Reason)
		return rep
	}
	var failures []simulator.Failure
	for _, spec := range o.failures {
		f, err := simulator.ParseFailure(rs.Topology(), spec)
		if err != nil {
			rep.Problem = fmt.Sprintf("%s: %v", where, err)
			return rep
		}
		failures = append(failures, f)
	}
	for seed := 1; seed <= o.seeds; seed++ {
		res, err := simulator.Run(simulator.Config{Regions: rs, Cluster: cluster, Seed: uint64(seed), Ties: simulator.TiesSeeded,
			Matching: o.matching, Failures: failures, SelectiveShare: o.share})
		if err != nil {
			rep.Problem = fmt.Sprintf("%s: simulation with seed %d: %v", where, seed, err)
			return rep
		}
		rep.Runs = append(rep.Runs, res)
		if !res.Verdict.OK() {
			rep.Problem = fmt.Sprintf("%s is not deadlock-free: simulation with seed %d: %s", where, seed, res.Reason)
			return rep
		}
	}
	return rep
}

// AssertDeadlockFree fails t (without stopping it) unless Verify finds the
// job deadlock-free; it returns whether it is.
func AssertDeadlockFree(t testing.TB, job *topology.JobGraph, mode exchange.Mode, cluster []resource.Count, opts ...Option) bool {
	t.Helper()
	rep := Verify(job, mode, cluster, opts...)
	if !rep.DeadlockFree() {
		t.Error(rep.Problem)
		return false
	}
	return true
}

// RequireDeadlockFree is AssertDeadlockFree that stops the test on failure.
func RequireDeadlockFree(t testing.TB, job *topology.JobGraph, mode exchange.Mode, cluster []resource.Count, opts ...Option) {
	t.Helper()
	if !AssertDeadlockFree(t, job, mode, cluster, opts...) {
		t.FailNow()
	}
}

func describeCluster(cluster []resource.Count) string {
	total := 0
	for _, c := range cluster {
		total += c.N
	}
	if len(cluster) == 1 && cluster[0].Profile.IsUnknown() {
		return fmt.Sprintf("%d slots", total)
	}
	s := fmt.Sprintf("%d slots (", total)
	for i, c := range cluster {
		if i > 0 {
			s += ", "
		}
		s += c.String()
	}
	return s + ")"
}
