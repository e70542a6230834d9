#!/usr/bin/env bash
# The repository's files speak to its users: they tell neither the history
# of the work (how or when something was done) nor cite documents the
# repository does not have. Lists the offending lines and exits 1, if any.
set -euo pipefail
cd "$(dirname "$0")/.."
# (the words are split so that this file does not match itself)
pattern='stop [0-9]|sit''ting|place''bo|issue [0-9]|SPEC[.]md|DESIGN[.]md|review''er|seed 00[0-9]|the see''ds'
if git ls-files -z -- '*.md' '*.go' Makefile 'scripts/*' | xargs -0 grep -niE "$pattern"; then
	echo "check-words: the lines above tell the history of the work or cite files the repository does not have" >&2
	exit 1
fi
echo "check-words: ok"
