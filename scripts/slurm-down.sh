#!/usr/bin/env bash
# slurm-down.sh stops the private Slurm cluster of scripts/slurm-up.sh:
# exactly the processes named by its pid files (the slurmd of every node
# first, then slurmctld, then munged), waiting for each group to end. The
# directory is kept (logs); REGIONSCHED_SLURM_CLEAN=1 removes it too.
#
#   REGIONSCHED_SLURM_DIR   the directory (default /tmp/regionsched-slurm)
set -euo pipefail

dir=${REGIONSCHED_SLURM_DIR:-/tmp/regionsched-slurm}
log() { echo "slurm-down: $*" >&2; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# stop NAME PIDFILE...: TERM the processes of the pid files that are still
# NAME (a stale pid file is only removed), wait up to 15 s for all of
# them, then KILL what is left.
stop() {
	local name=$1 f pid pids=()
	shift
	for f in "$@"; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
			$sudo kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
		rm -f "$f"
	done
	for _ in $(seq 150); do
		local left=()
		for pid in ${pids[@]+"${pids[@]}"}; do
			[ -d "/proc/$pid" ] && left+=("$pid")
		done
		((${#left[@]})) || return 0
		pids=("${left[@]}")
		sleep 0.1
	done
	log "$name ${pids[*]} did not stop in 15 s: killing"
	$sudo kill -KILL "${pids[@]}" 2>/dev/null || true
}

if [ -d "$dir/run" ]; then
	shopt -s nullglob
	stop slurmd "$dir"/run/slurmd-*.pid
	stop slurmctld "$dir/run/slurmctld.pid"
	stop munged "$dir/run/munged.pid"
	log "stopped (logs in $dir/log)"
else
	log "nothing to stop in $dir"
fi
if [ "${REGIONSCHED_SLURM_CLEAN:-}" = 1 ]; then
	rm -rf "$dir"
fi
