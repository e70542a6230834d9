#!/usr/bin/env bash
# k8s-stages.sh prints the KWOK stage configuration of scripts/k8s-up.sh on
# stdout: KWOK's own stages of its version (from its module source: nodes
# initialized and kept Ready, pods made Running once bound, pods deleted
# once marked deleted) and regionsched's completion stage: a Running pod
# annotated regionsched.io/complete-after (a duration such as "5s")
# Succeeds that long after KWOK saw it Running. A pod without the
# annotation runs until it is deleted.
#
#   KWOK_VERSION   default v0.8.0
set -euo pipefail

kwok_version=${KWOK_VERSION:-v0.8.0}
go=${GO:-go}
src=$(cd / && GOFLAGS=-mod=mod "$go" mod download -json "sigs.k8s.io/kwok@$kwok_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src/kustomize/stage" ] || {
	echo "k8s-stages: error: no source of sigs.k8s.io/kwok@$kwok_version in the module cache" >&2
	exit 1
}
for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
	cat "$src/kustomize/stage/$f"
	echo "---"
done
cat <<'YAML'
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: regionsched-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.annotations["regionsched.io/complete-after"]'
      operator: 'Exists'
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["regionsched.io/complete-after"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
YAML
