#!/usr/bin/env bash
# k8s-build.sh builds the programs of regionsched's local Kubernetes control
# plane from source through the Go module proxy and caches them by version:
# etcd, kube-apiserver and kwok under $REGIONSCHED_K8S_CACHE/<versions>/bin.
# A program already there is not built again, so only the first run takes
# minutes (kube-apiserver: about 4 on 2 cores); scripts/k8s-up.sh calls it.
#
#   scripts/k8s-build.sh           # prints the bin directory on stdout
#
# Environment:
#   REGIONSCHED_K8S_CACHE  the cache (default ~/.cache/regionsched/k8s)
#   ETCD_VERSION           default v3.6.16
#   KUBE_VERSION           kube-apiserver's, default v1.35.4
#   KWOK_VERSION           default v0.8.0
set -euo pipefail

etcd_version=${ETCD_VERSION:-v3.6.16}
kube_version=${KUBE_VERSION:-v1.35.4}
kwok_version=${KWOK_VERSION:-v0.8.0}
cache=${REGIONSCHED_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/regionsched/k8s}
bin=$cache/kube-$kube_version-etcd-$etcd_version-kwok-$kwok_version/bin
go=${GO:-go}

log() { echo "k8s-build: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}
command -v "$go" >/dev/null 2>&1 || die "no Go toolchain ($go) on PATH"
mkdir -p "$bin"

# wrapper NAME: a fresh module directory for building NAME outside any
# module of the checkout (the programs' own modules have replace
# directives, which go install refuses).
wrapper() {
	local w=$cache/build/$1
	rm -rf "$w"
	mkdir -p "$w"
	(cd "$w" && GOFLAGS=-mod=mod "$go" mod init "regionsched-k8s-build/$1" >/dev/null 2>&1)
	echo "$w"
}

# done NAME: the program is in the cache (an interrupted build leaves only
# a .tmp file, never a half-written program under its name).
built() { [ -x "$bin/$1" ]; }

build_etcd() {
	built etcd && return 0
	log "building etcd $etcd_version (about a minute)"
	local w start=$SECONDS
	w=$(wrapper etcd)
	(
		cd "$w"
		export GOFLAGS=-mod=mod
		"$go" get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null 2>&1 ||
			"$go" get "go.etcd.io/etcd/server/v3@$etcd_version"
		"$go" build -trimpath -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
	) || die "building etcd $etcd_version failed (see above)"
	mv "$bin/etcd.tmp" "$bin/etcd"
	log "etcd built in $((SECONDS - start))s"
}

build_apiserver() {
	built kube-apiserver && return 0
	log "building kube-apiserver $kube_version (3-5 minutes on 2 cores)"
	local w start=$SECONDS gomod staging
	w=$(wrapper kube-apiserver)
	(
		cd "$w"
		export GOFLAGS=-mod=mod
		# k8s.io/kubernetes requires its staging modules at v0.0.0 and
		# replaces them by ./staging directories, which a module requiring
		# it does not have: replace each by its published version.
		gomod=$("$go" mod download -json "k8s.io/kubernetes@$kube_version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
		[ -s "$gomod" ] || exit 1
		staging="v0${kube_version#v1}"
		{
			echo "require k8s.io/kubernetes $kube_version"
			sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#replace \1 => \1 '"$staging"'#p' "$gomod"
		} >>go.mod
		grep -q '^replace' go.mod || exit 1
		"$go" get "k8s.io/kubernetes/cmd/kube-apiserver@$kube_version" >/dev/null 2>&1 ||
			"$go" get "k8s.io/kubernetes/cmd/kube-apiserver@$kube_version"
		"$go" build -trimpath -o "$bin/kube-apiserver.tmp" \
			-ldflags "-X k8s.io/component-base/version.gitVersion=$kube_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(cut -d. -f2 <<<"$kube_version")" \
			k8s.io/kubernetes/cmd/kube-apiserver
	) || die "building kube-apiserver $kube_version failed (see above)"
	mv "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
	log "kube-apiserver built in $((SECONDS - start))s"
}

build_kwok() {
	built kwok && return 0
	log "building kwok $kwok_version (about a minute and a half)"
	local start=$SECONDS
	GOBIN=$bin/kwok.d GOFLAGS= "$go" install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$kwok_version" ||
		die "building kwok $kwok_version failed (see above)"
	mv "$bin/kwok.d/kwok" "$bin/kwok"
	rmdir "$bin/kwok.d"
	log "kwok built in $((SECONDS - start))s"
}

build_etcd
build_kwok
build_apiserver
echo "$bin"
