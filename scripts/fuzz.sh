#!/usr/bin/env bash
# fuzz.sh: a short run of every fuzz target of the module (make fuzz).
#
# Usage: scripts/fuzz.sh FUZZTIME   (a duration such as 15s, or a count such as 100000x)
#
# A failing input is written under the target's testdata/fuzz/ and fails
# the run. Go 1.26's fuzz coordinator can also fail a duration-bounded run
# with a bare "context deadline exceeded" when the time is up while a
# worker is busy (golang/go#75804, fixed in Go 1.27): no input is written
# and there is nothing to reproduce. Such a run counts as passed once the
# target's corpus, replayed as a plain test, passes.
set -euo pipefail

go=${GO:-go}
fuzztime=${1:?usage: scripts/fuzz.sh FUZZTIME}
cd "$(dirname "$0")/.."

# corpus_size counts the inputs in a corpus directory (0 if there is none).
corpus_size() {
	if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi
}

for target in $(grep -rhoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' . | sed 's/^func //' | sort -u); do
	pkg=$(dirname "$(grep -rlE "^func $target\(" --include='*_test.go' . | head -1)")
	corpus="$pkg/testdata/fuzz/$target"
	echo "fuzz $target in $pkg for $fuzztime"
	before=$(corpus_size "$corpus")
	out=$(mktemp)
	if "$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"; then
		rm -f "$out"
		continue
	fi
	if tail -n 5 "$out" | grep -q 'context deadline exceeded' && [ "$(corpus_size "$corpus")" -eq "$before" ]; then
		rm -f "$out"
		echo "fuzz $target: stopped by Go's fuzz coordinator at the time limit (golang/go#75804), no failing input written; replaying the corpus"
		"$go" test -count=1 -run "^$target\$" "$pkg"
		continue
	fi
	rm -f "$out"
	echo "fuzz $target: failed (a failing input, if any, is in $corpus)" >&2
	exit 1
done
