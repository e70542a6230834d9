package admission_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/internal/scenario"
)

// TestScenarios runs the admission's scenarios of testdata/*.txt: the
// rules of the policies, maxRunningJobs, claims, gangs, drivers,
// preemption, priority changes and kills, step by step. Each file drives
// jobs on one Queues in virtual time through the multi-job harness
// (scenario.Multi documents the commands), which checks the admission's
// invariants after every decision. Regenerate the expected output with
//
//	go test ./admission/ -run TestScenarios -rewrite
//
// and read the diff: every line must be what the rules say.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, new(scenario.Multi).Run)
	})
}
