#!/usr/bin/env bash
# k8s-up.sh starts a private Kubernetes control plane for regionsched's
# tests on this machine: etcd, kube-apiserver and KWOK (which fakes the
# nodes and the lives of their pods, so no kubelet and no container runs),
# all on 127.0.0.1 on free ports, everything (certificates, data, logs,
# pid files, kubeconfig) under one directory. No scheduler and no
# controller manager run: regionsched binds its pods itself. (Without a
# node lifecycle controller to lift it, the not-ready taint the API server
# puts on new nodes would stay: its admission plugin TaintNodesByCondition
# is off.)
#
#   scripts/k8s-up.sh              # builds the programs the first time (minutes)
#   . /tmp/regionsched-k8s/env     # exports KUBECONFIG for kubectl and the tests
#   scripts/k8s-down.sh            # stops exactly what k8s-up started
#
# Environment:
#   REGIONSCHED_K8S_DIR    the directory (default /tmp/regionsched-k8s)
#   REGIONSCHED_K8S_CACHE  where the programs are built (scripts/k8s-build.sh)
#   REGIONSCHED_K8S_WAIT   seconds to wait for the API server (default 60)
#
# KWOK manages the nodes annotated kwok.x-k8s.io/node=fake: a test creates
# such nodes and KWOK makes them Ready; a pod bound to one becomes Running,
# and one annotated regionsched.io/complete-after (a duration, "5s")
# Succeeds that long after it started. Running it again while the control
# plane is up does nothing but check it and print the kubeconfig's path.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${REGIONSCHED_K8S_DIR:-/tmp/regionsched-k8s}
wait_s=${REGIONSCHED_K8S_WAIT:-60}

log() { echo "k8s-up: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# alive PIDFILE NAME: the process of the pid file runs and is NAME.
alive() { [ -s "$1" ] && [ "$(cat "/proc/$(cat "$1")/comm" 2>/dev/null)" = "$2" ]; }

# port_free PORT: nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: a port nothing listens on, from a random start in 20000-29999
# (not one handed out before by this script run).
taken=" "
free_port() {
	local p=$((20000 + RANDOM % 10000)) i
	for i in $(seq 200); do
		if [[ $taken != *" $p "* ]] && port_free "$p"; then
			taken+="$p "
			echo "$p"
			return 0
		fi
		p=$((p + 1))
	done
	die "no free port found near $((p - 200))"
}

need_tools() {
	local need=()
	command -v openssl >/dev/null 2>&1 || need+=(openssl)
	command -v curl >/dev/null 2>&1 || need+=(curl)
	((${#need[@]})) || return 0
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	log "installing ${need[*]}"
	$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null ||
		die "apt-get install ${need[*]} failed; install them and run again"
}

# ports: reuse those of a control plane started before in this directory
# while one of its processes still runs, else pick free ones.
ports() {
	if [ -s "$dir/ports" ] && { alive "$dir/run/etcd.pid" etcd || alive "$dir/run/kube-apiserver.pid" kube-apiserver || alive "$dir/run/kwok.pid" kwok; }; then
		# shellcheck source=/dev/null
		. "$dir/ports"
		return 0
	fi
	etcd_port=$(free_port)
	etcd_peer_port=$(free_port)
	api_port=$(free_port)
	kwok_port=$(free_port)
	printf 'etcd_port=%s\netcd_peer_port=%s\napi_port=%s\nkwok_port=%s\n' \
		"$etcd_port" "$etcd_peer_port" "$api_port" "$kwok_port" >"$dir/ports"
}

pki() {
	local p=$dir/pki
	mkdir -p "$p"
	if [ ! -s "$p/serving.crt" ]; then
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=regionsched-k8s" \
			-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
			-keyout "$p/serving.key" -out "$p/serving.crt" 2>/dev/null || die "openssl could not make the serving certificate"
	fi
	if [ ! -s "$p/sa.key" ]; then
		openssl genrsa -out "$p/sa.key" 2048 2>/dev/null && openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null ||
			die "openssl could not make the service-account keys"
	fi
	if [ ! -s "$p/token" ]; then
		od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$p/token"
		echo "$(cat "$p/token"),admin,admin,system:masters" >"$p/tokens.csv"
	fi
	chmod 600 "$p"/*.key "$p/token" "$p/tokens.csv"
}

write_files() {
	local token
	token=$(cat "$dir/pki/token")
	cat >"$dir/kubeconfig" <<EOF
# Written by regionsched's scripts/k8s-up.sh; a private test control plane.
apiVersion: v1
kind: Config
clusters:
- name: regionsched
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $dir/pki/serving.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: regionsched
  context: {cluster: regionsched, user: admin}
current-context: regionsched
EOF
	chmod 600 "$dir/kubeconfig"
	cat >"$dir/env" <<EOF
# Source this file to use regionsched's test control plane (scripts/k8s-up.sh).
export KUBECONFIG=$dir/kubeconfig
export REGIONSCHED_K8S_KUBECONFIG=$dir/kubeconfig
EOF
	"$here/k8s-stages.sh" >"$dir/stages.yaml"
}

start_etcd() {
	alive "$dir/run/etcd.pid" etcd && return 0
	port_free "$etcd_port" || die "port $etcd_port (etcd) is taken by another program; stop the control plane (scripts/k8s-down.sh) and start it again to pick new ports"
	setsid "$bin/etcd" --name default --data-dir "$dir/etcd" \
		--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
		--initial-cluster "default=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync \
		</dev/null >"$dir/log/etcd.log" 2>&1 &
	echo $! >"$dir/run/etcd.pid"
	wait_for "etcd" "$dir/log/etcd.log" "$dir/run/etcd.pid" etcd curl -fsS "http://127.0.0.1:$etcd_port/health"
}

start_apiserver() {
	alive "$dir/run/kube-apiserver.pid" kube-apiserver && return 0
	port_free "$api_port" || die "port $api_port (kube-apiserver) is taken by another program; stop the control plane (scripts/k8s-down.sh) and start it again to pick new ports"
	local p=$dir/pki
	setsid "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
		--tls-cert-file "$p/serving.crt" --tls-private-key-file "$p/serving.key" --cert-dir "$p" \
		--service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
		--service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.96.0.0/24 \
		--token-auth-file "$p/tokens.csv" --authorization-mode RBAC \
		--endpoint-reconciler-type none --disable-admission-plugins ServiceAccount,TaintNodesByCondition \
		</dev/null >"$dir/log/kube-apiserver.log" 2>&1 &
	echo $! >"$dir/run/kube-apiserver.pid"
	wait_for "kube-apiserver" "$dir/log/kube-apiserver.log" "$dir/run/kube-apiserver.pid" kube-apiserver \
		curl -fsS --cacert "$p/serving.crt" -H "Authorization: Bearer $(cat "$p/token")" "https://127.0.0.1:$api_port/readyz"
}

start_kwok() {
	alive "$dir/run/kwok.pid" kwok && return 0
	setsid "$bin/kwok" --kubeconfig "$dir/kubeconfig" --config "$dir/stages.yaml" \
		--manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
		--server-address "127.0.0.1:$kwok_port" --cidr 10.0.0.1/16 --node-ip 10.0.0.1 \
		</dev/null >"$dir/log/kwok.log" 2>&1 &
	echo $! >"$dir/run/kwok.pid"
	wait_for "kwok" "$dir/log/kwok.log" "$dir/run/kwok.pid" kwok curl -fsS "http://127.0.0.1:$kwok_port/healthz"
}

# wait_for WHAT LOG PIDFILE NAME CMD...: CMD succeeds within the wait,
# or the process died or the wait ran out: fail with the log's tail.
wait_for() {
	local what=$1 logf=$2 pidf=$3 name=$4 deadline=$((SECONDS + wait_s)) start=$SECONDS
	shift 4
	while ((SECONDS < deadline)); do
		if "$@" >/dev/null 2>&1; then
			log "$what ready after $((SECONDS - start))s"
			return 0
		fi
		alive "$pidf" "$name" || {
			tail -n 20 "$logf" >&2
			die "$what exited; see $logf"
		}
		sleep 0.2
	done
	tail -n 20 "$logf" >&2
	die "$what not ready after ${wait_s}s; see $logf"
}

need_tools
mkdir -p "$dir"/{run,log,etcd}
chmod 700 "$dir/etcd"
bin=$("$here/k8s-build.sh") || die "the programs could not be built (scripts/k8s-build.sh)"
ports
pki
write_files
start_etcd
start_apiserver
start_kwok
log "up: etcd 127.0.0.1:$etcd_port, kube-apiserver https://127.0.0.1:$api_port, kwok; . $dir/env"
echo "$dir/kubeconfig"
