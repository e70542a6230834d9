#!/usr/bin/env bash
# instructions.sh: count the instructions one run of a benchmark executes,
# under valgrind's callgrind: unlike its time, the count does not move with
# what else the machine is doing, so two versions of the code compare
# exactly (the garbage collector's share still varies by a few percent).
#
# Usage: scripts/instructions.sh PKG BENCH [FUNC_REGEX]   (PKG from the repository root)
#   e.g. scripts/instructions.sh ./scheduler/ 'SchedulerJob/chains-1000000' 'Scheduler\)\.(report|Ready)|region\.FromJob'
#
# It prints the program's total and, for every function whose name
# matches FUNC_REGEX, the instructions spent in it and in what it calls
# (callgrind_annotate --inclusive=yes). The benchmark runs once
# (-test.benchtime 1x) with GOMAXPROCS=1; setup outside the timer (say,
# region.FromJob) is counted too, so name it in FUNC_REGEX to subtract it.
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail

go=${GO:-go}
pkg=${1:?usage: $0 PKG BENCH [FUNC_REGEX]}
bench=${2:?usage: $0 PKG BENCH [FUNC_REGEX]}
funcs=${3:-}
command -v valgrind >/dev/null || { echo "$0: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$go" test -c -o "$tmp/bench.test" "$pkg"
# valgrind cannot run RDTSCP (the runtime's cputicks) and its signal
# handling trips over asynchronous preemption: both are turned off.
if ! (cd "$tmp" && GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 GOMAXPROCS=1 \
	valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
	./bench.test -test.run '^$' -test.bench "$bench" -test.benchtime 1x -test.benchmem >"$tmp/bench.out" 2>"$tmp/valgrind.log"); then
	cat "$tmp/bench.out" "$tmp/valgrind.log" >&2
	exit 1
fi
grep '^Benchmark' "$tmp/bench.out" || { echo "$0: no benchmark matched $bench" >&2; exit 1; }
callgrind_annotate "$tmp/out" | grep 'PROGRAM TOTALS'
if [ -n "$funcs" ]; then
	# --threshold=100: every function, not only those above 1% of the total.
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$tmp/out" | grep -E "$funcs" | grep -E '^ *[0-9,]+ ' |
		sed 's#github.com/regionsched/regionsched/##g; s# \[.*\]$##'
fi
