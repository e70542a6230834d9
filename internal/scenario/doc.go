// Package scenario is the datadriven harness (github.com/cockroachdb/
// datadriven) of the scenario files in scheduler/testdata,
// multijob/testdata and admission/testdata: one place for what they share,
// the parsing of arguments, times and slots, the jobs they load or build,
// and the rendering of slots and admission events; and the multi-job
// harness (Multi) that drives the admission and multijob scenarios in
// virtual time. Only tests use it.
package scenario
