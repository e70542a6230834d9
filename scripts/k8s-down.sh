#!/usr/bin/env bash
# k8s-down.sh stops the control plane of scripts/k8s-up.sh: exactly the
# processes named by its pid files (kwok first, then kube-apiserver, then
# etcd), each only if it is still the program it was, waiting for each to
# end (KILL after 15 s). The directory is kept (logs, data, certificates,
# ports: k8s-up starts the same control plane again);
# REGIONSCHED_K8S_CLEAN=1 removes it too.
#
#   REGIONSCHED_K8S_DIR   the directory (default /tmp/regionsched-k8s)
set -euo pipefail

dir=${REGIONSCHED_K8S_DIR:-/tmp/regionsched-k8s}
log() { echo "k8s-down: $*" >&2; }

# stop NAME: TERM the process of run/NAME.pid if it is still NAME (a stale
# pid file is only removed), wait up to 15 s, then KILL it.
stop() {
	local name=$1 f=$dir/run/$1.pid pid
	[ -s "$f" ] || return 0
	pid=$(cat "$f")
	if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 150); do
			[ -d "/proc/$pid" ] || break
			sleep 0.1
		done
		if [ -d "/proc/$pid" ]; then
			log "$name ($pid) did not stop in 15 s: killing"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$f"
}

if [ -d "$dir/run" ]; then
	stop kwok
	stop kube-apiserver
	stop etcd
	log "stopped (logs in $dir/log)"
else
	log "nothing to stop in $dir"
fi
if [ "${REGIONSCHED_K8S_CLEAN:-}" = 1 ]; then
	rm -rf "$dir"
fi
