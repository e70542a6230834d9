package k8stest

import (
	"os"
	"testing"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// JobFile reads a job file into a job to submit under mode: its name,
// queue, user, priority and driver from the file.
func JobFile(t testing.TB, path string, mode exchange.Mode) multijob.JobSpec {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return Job(t, string(data), mode)
}

// Job reads a job file's JSON into a job to submit under mode.
func Job(t testing.TB, jobJSON string, mode exchange.Mode) multijob.JobSpec {
	t.Helper()
	g, err := topology.DecodeBytes([]byte(jobJSON))
	if err != nil {
		t.Fatalf("decoding a job: %v", err)
	}
	sub := g.Submission()
	spec := multijob.JobSpec{
		JobSpec: admission.JobSpec{Name: g.Name(), Queue: sub.Queue, User: sub.User, Priority: sub.Priority},
		Regions: region.Build(topology.NewExecutionTopology(g, mode)),
	}
	if sub.Driver != nil {
		d := sub.Driver.Resources
		spec.Driver = &d
	}
	return spec
}
