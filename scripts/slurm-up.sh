#!/usr/bin/env bash
# slurm-up.sh starts a private Slurm cluster for regionsched's tests on this
# machine: munged with its own key and socket, slurmctld, and one slurmd per
# virtual node (n1..n5, 4 CPUs each, all on localhost with their own ports),
# everything (config, state, spool, logs, pid files) under one directory.
#
#   scripts/slurm-up.sh            # installs the Debian packages when missing
#   . /tmp/regionsched-slurm/env   # exports SLURM_CONF for sinfo, squeue, ...
#   scripts/slurm-down.sh          # stops exactly what slurm-up started
#
# Environment:
#   REGIONSCHED_SLURM_DIR   the directory (default /tmp/regionsched-slurm)
#   REGIONSCHED_SLURM_PORT  slurmctld's port; the nodes take the next five
#                           (default 17900, nodes 17901-17905)
#   REGIONSCHED_SLURM_WAIT  seconds to wait for the nodes to be idle (default 60)
#
# Partitions: "low" (default, n1..n4, PriorityTier=1, jobs are cancelled
# when preempted), "high" (n1..n4, PriorityTier=10: a job there preempts
# jobs of "low"), and "cpus1".."cpus4" (node n4 only, at most N CPUs in
# use: a cluster of exactly N CPUs), and "fault" (node n5 alone, for the
# test that restarts slurmctld: a step that ends while slurmctld is down
# keeps its node completing for a minute or two). Running it again while the cluster is
# up does nothing but check it.
set -euo pipefail

dir=${REGIONSCHED_SLURM_DIR:-/tmp/regionsched-slurm}
port=${REGIONSCHED_SLURM_PORT:-17900}
wait_s=${REGIONSCHED_SLURM_WAIT:-60}
nodes=(n1 n2 n3 n4 n5)

log() { echo "slurm-up: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# The daemons run as root (SlurmUser=root, munged with a root-owned key):
# without root, through sudo.
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# alive PIDFILE: the process of the pid file runs (checked in /proc, which
# works for processes of other users too).
alive() { [ -s "$1" ] && [ -d "/proc/$(cat "$1")" ]; }

install_packages() {
	local need=()
	command -v munged >/dev/null 2>&1 || need+=(munge)
	command -v slurmctld >/dev/null 2>&1 || need+=(slurmctld)
	command -v slurmd >/dev/null 2>&1 || need+=(slurmd)
	command -v sinfo >/dev/null 2>&1 || need+=(slurm-client)
	((${#need[@]})) || return 0
	log "installing ${need[*]}"
	$sudo apt-get update -qq
	# The packages' own services (munge, slurmctld, slurmd on the system
	# config) are not wanted: policy-rc.d keeps them from starting.
	local rc=/usr/sbin/policy-rc.d restore=""
	if [ ! -e "$rc" ]; then
		printf '#!/bin/sh\nexit 101\n' | $sudo tee "$rc" >/dev/null
		$sudo chmod +x "$rc"
		restore=1
	fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null || {
		[ -z "$restore" ] || $sudo rm -f "$rc"
		die "apt-get install ${need[*]} failed"
	}
	[ -z "$restore" ] || $sudo rm -f "$rc"
}

write_config() {
	mkdir -p "$dir"/{etc,munge,state,log,run} "${nodes[@]/#/$dir/spool/}"
	chmod 755 "$dir" "$dir/munge" # munge clients must reach the socket
	cat >"$dir/etc/slurm.conf" <<EOF
# Written by regionsched's scripts/slurm-up.sh; a private test cluster.
ClusterName=regionsched
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
SchedulerParameters=batch_sched_delay=0,sched_interval=1,sched_min_interval=0,bf_interval=1
KillWait=2
# A step that ended while slurmctld was down completes a minute later;
# meanwhile its node must not be drained as "Kill task failed".
UnkillableStepTimeout=240
MinJobAge=60
ReturnToService=2
SlurmctldTimeout=30
MessageTimeout=3
SlurmdTimeout=60
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
NodeName=n[1-5] NodeHostname=localhost Port=$((port + 1))-$((port + 5)) CPUs=4 RealMemory=4096 State=UNKNOWN
PartitionName=low Nodes=n[1-4] Default=YES PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP
PartitionName=high Nodes=n[1-4] PriorityTier=10 PreemptMode=OFF MaxTime=INFINITE State=UP
PartitionName=cpus1 Nodes=n4 MaxCPUsPerNode=1 PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP
PartitionName=cpus2 Nodes=n4 MaxCPUsPerNode=2 PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP
PartitionName=cpus3 Nodes=n4 MaxCPUsPerNode=3 PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP
PartitionName=cpus4 Nodes=n4 MaxCPUsPerNode=4 PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP
PartitionName=fault Nodes=n5 PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP
EOF
	# An empty cgroup.conf keeps slurmd from looking for the system's.
	echo "CgroupPlugin=autodetect" >"$dir/etc/cgroup.conf"
	cat >"$dir/env" <<EOF
# Source this file to use regionsched's test cluster (scripts/slurm-up.sh).
export SLURM_CONF=$dir/etc/slurm.conf
EOF
}

start_munge() {
	alive "$dir/run/munged.pid" && return 0
	if [ ! -s "$dir/munge/munge.key" ]; then
		dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
		chmod 400 "$dir/munge/munge.key"
	fi
	# munged runs as root here (so it accepts a key owned by root); --force
	# lets it start with a socket folder that is not its system default.
	$sudo munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
		--pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed"
	for _ in $(seq 50); do
		[ -S "$dir/munge/munge.socket" ] && return 0
		sleep 0.1
	done
	die "munged did not create its socket; see $dir/log/munged.log"
}

start_slurm() {
	export SLURM_CONF="$dir/etc/slurm.conf"
	if ! alive "$dir/run/slurmctld.pid"; then
		# -i: ignore state that does not match the config (a changed config).
		$sudo env SLURM_CONF="$SLURM_CONF" slurmctld -i -f "$SLURM_CONF"
	fi
	for n in "${nodes[@]}"; do
		alive "$dir/run/slurmd-$n.pid" && continue
		$sudo env SLURM_CONF="$SLURM_CONF" slurmd -f "$SLURM_CONF" -N "$n"
	done
}

wait_idle() {
	local deadline=$((SECONDS + wait_s)) states=""
	while ((SECONDS < deadline)); do
		states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true)
		# A node drained or down by an earlier run (a task that would not
		# die, a restart) is ours to resume: this is a private test cluster.
		if grep -q ' drained$\| down$\| drain' <<<"$states"; then
			scontrol update nodename=n[1-5] state=resume 2>/dev/null || true
		fi
		if [ "$(grep -c ' idle$\| mixed$\| allocated$' <<<"$states" || true)" -eq ${#nodes[@]} ]; then
			return 0
		fi
		sleep 0.2
	done
	die "the nodes are not idle after ${wait_s}s (sinfo: ${states:-no answer}); see $dir/log"
}

install_packages
write_config
start_munge
start_slurm
wait_idle
log "up: ${#nodes[@]} nodes idle; . $dir/env (SLURM_CONF=$dir/etc/slurm.conf)"
