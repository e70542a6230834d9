//go:build race

package simulator_test

// raceEnabled reports whether the tests run under the race detector, which
// slows the simulation tenfold: loops over seeds run fewer seeds then.
const raceEnabled = true
