#!/usr/bin/env bash
# slurm-down.sh stops the private Slurm cluster of scripts/slurm-up.sh:
# exactly the processes named by its pid files (the slurmd of every node
# first, then slurmctld, then munged), waiting for each to end. The
# directory is kept (logs); REGIONSCHED_SLURM_CLEAN=1 removes it too.
#
#   REGIONSCHED_SLURM_DIR   the directory (default /tmp/regionsched-slurm)
set -euo pipefail

dir=${REGIONSCHED_SLURM_DIR:-/tmp/regionsched-slurm}
log() { echo "slurm-down: $*" >&2; }

# stop PIDFILE NAME: TERM the process of the pid file if it is NAME, wait
# up to 15 s, then KILL it.
stop() {
	local pidfile=$1 name=$2 pid
	[ -s "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	if ! kill -0 "$pid" 2>/dev/null || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "$name" ]; then
		rm -f "$pidfile" # stale: not ours any more
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || {
			rm -f "$pidfile"
			return 0
		}
		sleep 0.1
	done
	log "$name ($pid) did not stop in 15 s: killing it"
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$pidfile"
}

if [ -d "$dir/run" ]; then
	for f in "$dir"/run/slurmd-*.pid; do
		[ -e "$f" ] && stop "$f" slurmd
	done
	stop "$dir/run/slurmctld.pid" slurmctld
	stop "$dir/run/munged.pid" munged
	log "stopped (logs in $dir/log)"
else
	log "nothing to stop in $dir"
fi
if [ "${REGIONSCHED_SLURM_CLEAN:-}" = 1 ]; then
	rm -rf "$dir"
fi
