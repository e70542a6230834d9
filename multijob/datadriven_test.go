package multijob_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/internal/scenario"
)

// TestScenarios runs the scenarios of testdata/*.txt on the multi-job
// harness (scenario.Multi documents the commands): each file drives one
// Scheduler in virtual time, with a tiny runtime around it, and shows what
// it decides at every instant. Regenerate the expected output with
//
//	go test ./multijob/ -run TestScenarios -rewrite
//
// and read the diff: every line must be what the rules say.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, new(scenario.Multi).Run)
	})
}
