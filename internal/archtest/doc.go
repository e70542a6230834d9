// Package archtest holds tests of the repository's architecture: which
// packages may use goroutines, the wall clock, locks and random sources,
// and which way imports point (docs/architecture.md). It has no
// code of its own.
package archtest
