#!/usr/bin/env bash
# slurm-down.sh stops the private Slurm cluster of scripts/slurm-up.sh:
# it cancels the cluster's jobs, then stops exactly the processes named by
# its pid files (the slurmd of every node first, then slurmctld, then
# munged), waiting for each group to end, and kills any slurmstepd of
# this cluster still there (with its tasks). The
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

# stepds lists the slurmstepd processes of this cluster: a step whose end
# slurmctld never heard of (it was down) keeps its slurmstepd retrying.
stepds() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
		if $sudo cat "$p/environ" 2>/dev/null | tr '\0' '\n' | grep -qx "SLURM_CONF=$dir/etc/slurm.conf"; then
			echo "${p#/proc/}"
		fi
	done
}

# tree PID...: the processes and all their descendants.
tree() {
	local pid
	for pid in "$@"; do
		echo "$pid"
		# shellcheck disable=SC2046
		tree $(pgrep -P "$pid" || true)
	done
}

# cancel_jobs cancels every job of the cluster (a private test cluster)
# and waits up to 10 s for them to end, so that no task outlives it.
cancel_jobs() {
	local conf=$dir/etc/slurm.conf
	[ -s "$dir/run/slurmctld.pid" ] && [ -d "/proc/$(cat "$dir/run/slurmctld.pid")" ] || return 0
	local jobs
	jobs=$(SLURM_CONF=$conf timeout 10 squeue -h -o %A 2>/dev/null || true)
	[ -n "$jobs" ] || return 0
	log "cancelling $(wc -w <<<"$jobs") jobs"
	# shellcheck disable=SC2086
	SLURM_CONF=$conf timeout 10 scancel $jobs 2>/dev/null || true
	for _ in $(seq 100); do
		[ -z "$(SLURM_CONF=$conf timeout 10 squeue -h -o %A 2>/dev/null || true)" ] && return 0
		sleep 0.1
	done
	log "jobs still completing after 10 s: their processes are killed below"
}

if [ -d "$dir/run" ]; then
	shopt -s nullglob
	cancel_jobs
	stop slurmd "$dir"/run/slurmd-*.pid
	mapfile -t left < <(stepds)
	if ((${#left[@]})); then
		mapfile -t procs < <(tree "${left[@]}")
		log "killing ${#left[@]} slurmstepd left behind and their tasks: ${procs[*]}"
		$sudo kill -KILL "${procs[@]}" 2>/dev/null || true
	fi
	stop slurmctld "$dir/run/slurmctld.pid"
	stop munged "$dir/run/munged.pid"
	log "stopped (logs in $dir/log)"
else
	log "nothing to stop in $dir"
fi
if [ "${REGIONSCHED_SLURM_CLEAN:-}" = 1 ]; then
	rm -rf "$dir"
fi
