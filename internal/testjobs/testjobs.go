// Package testjobs gives the tests of every package the example job files
// of examples/jobs, so that each package does not carry its own loader.
//
//	job := testjobs.FLIP119(t) // examples/jobs/flip119.json, decoded
package testjobs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/regionsched/regionsched/topology"
)

// Dir returns the absolute path of examples/jobs.
func Dir() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "examples", "jobs")
}

// Load decodes examples/jobs/name, failing the test on any error.
func Load(t testing.TB, name string) *topology.JobGraph {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatalf("example job %s: %v", name, err)
	}
	g, err := topology.DecodeBytes(data)
	if err != nil {
		t.Fatalf("example job %s: %v", name, err)
	}
	return g
}

// FLIP119 is the example job of FLIP-119: A(2) -forward-> B(2) -rescale->
// C(4) -hash-> D(4).
func FLIP119(t testing.TB) *topology.JobGraph { return Load(t, "flip119.json") }
