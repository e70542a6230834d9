#!/usr/bin/env bash
# pgo.sh: regenerate cmd/regionsched/default.pgo (make pgo), the CPU
# profile `go build` uses for profile-guided optimization of the
# regionsched command (Go's -pgo=auto, the default, picks up default.pgo
# in a main package's directory).
#
# Usage: scripts/pgo.sh
#
# The profile is merged from the benchmarks that run what the command
# spends its time on: the simulator on chains, shuffles and pipelined
# regions (which drives the scheduler, strategy and slot pool), the
# scheduler alone, the queue-level admission, and building regions. The
# gonum baselines (BenchmarkXNaive) are left out: the command never runs
# them. Regenerate it when the hot paths change; a stale profile only
# costs optimization, never correctness.
set -euo pipefail

go=${GO:-go}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# profile PKG BENCH: run the benchmarks BENCH of package PKG with a CPU profile.
profile() {
	local pkg=$1 bench=$2 name
	name=$(basename "$pkg")
	echo "profiling $bench in $pkg"
	"$go" test -c -o "$tmp/$name.test" "$pkg"
	(cd "$tmp" && "./$name.test" -test.run '^$' -test.bench "$bench" -test.benchtime 3x \
		-test.cpuprofile "$tmp/$name.prof" >/dev/null)
}

profile ./simulator/ '^BenchmarkSimulate$'
profile ./scheduler/ '^BenchmarkSchedulerJob$'
profile ./admission/ '^BenchmarkAdmission$'
profile ./region/ '^BenchmarkBuildRegions$'

"$go" tool pprof -proto "$tmp"/*.prof >cmd/regionsched/default.pgo
echo "wrote cmd/regionsched/default.pgo ($(wc -c <cmd/regionsched/default.pgo) bytes)"
