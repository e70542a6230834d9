//go:build race

package main

// raceEnabled reports whether the tests run under the race detector, which
// slows the timing tests about tenfold.
const raceEnabled = true
