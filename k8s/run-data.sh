#!/usr/bin/env bash
# Run Kiln's data pipeline on KubeRay: the RayJob of each stage in order, each one only after the
# one before it succeeded. See --help.
set -euo pipefail

STAGES=(ingest clean dedup mix tokenize)

usage() {
  cat <<'EOF'
usage: k8s/run-data.sh [--overlay DIR] [--from STAGE] [--timeout DURATION]

Renders the overlay (default k8s/overlays/data), applies its shared objects (namespace, volume
claim, ConfigMap, service account), then for each stage of ingest, clean, dedup, mix, tokenize:
applies that stage's RayJob and waits with
  kubectl wait --for=jsonpath='{.status.jobStatus}'=SUCCEEDED rayjob/kiln-<stage>
It stops with exit status 1 as soon as the RayJob's .status.jobDeploymentStatus is Failed or
ValidationFailed (KubeRay's own retries, backoffLimit, are used up), naming the commands that show
why. A stage whose RayJob is already finished is deleted and applied again (a rerun of a finished
stage skips its done work units); one still running is waited for, not restarted.

options:
  --overlay DIR      the kustomize overlay to render (default: k8s/overlays/data)
  --from STAGE       start at STAGE; the stages before it must have finished on the volume
  --timeout D        the longest wait for one stage, in kubectl's form (default: 6h)
  -h, --help         this text

environment: KUBECTL (default kubectl), KILN_NAMESPACE (default kiln), POLL_SECONDS (default 10)
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
overlay=$root/k8s/overlays/data
from=${STAGES[0]}
timeout=6h
kubectl=${KUBECTL:-kubectl}
namespace=${KILN_NAMESPACE:-kiln}
poll=${POLL_SECONDS:-10}

while [ $# -gt 0 ]; do
  case $1 in
    --overlay) overlay=${2:?--overlay needs a folder}; shift 2 ;;
    --from) from=${2:?--from needs a stage}; shift 2 ;;
    --timeout) timeout=${2:?--timeout needs a duration}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-data: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

start=-1
for i in "${!STAGES[@]}"; do
  [ "${STAGES[$i]}" = "$from" ] && start=$i
done
if [ "$start" -lt 0 ]; then
  echo "run-data: --from $from is not a stage (one of: ${STAGES[*]})" >&2
  exit 2
fi

rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
"$kubectl" kustomize "$overlay" >"$rendered"

# Objects are picked by their app.kubernetes.io/component label: shared, or the stage's name.
apply() {
  "$kubectl" apply -f "$rendered" -l "app.kubernetes.io/component=$1"
}

deployment_status() {
  "$kubectl" -n "$namespace" get rayjob "$1" -o 'jsonpath={.status.jobDeploymentStatus}' 2>/dev/null || true
}

# Wait for SUCCEEDED with kubectl wait; meanwhile poll for a terminal failure, so a failed stage
# stops the run now rather than at the timeout.
wait_for() {
  local name=$1 state waiter
  "$kubectl" -n "$namespace" wait --for='jsonpath={.status.jobStatus}=SUCCEEDED' "rayjob/$name" \
    --timeout="$timeout" >/dev/null &
  waiter=$!
  while kill -0 "$waiter" 2>/dev/null; do
    state=$(deployment_status "$name")
    case $state in
      Failed|ValidationFailed)
        kill "$waiter" 2>/dev/null || true
        wait "$waiter" 2>/dev/null || true
        echo "run-data: $name is $state: $("$kubectl" -n "$namespace" get rayjob "$name" \
          -o 'jsonpath={.status.reason}: {.status.message}' 2>/dev/null || true)" >&2
        echo "  see: kubectl -n $namespace describe rayjob $name" >&2
        echo "       kubectl -n $namespace logs -l app.kubernetes.io/component=${name#kiln-},ray.io/node-type=head --tail=100" >&2
        return 1
        ;;
    esac
    sleep "$poll"
  done
  if ! wait "$waiter"; then
    echo "run-data: $name did not succeed within $timeout (kubectl -n $namespace get rayjob $name)" >&2
    return 1
  fi
}

echo "run-data: shared objects (namespace $namespace, volume claim, ConfigMap, service account)"
apply shared

total=${#STAGES[@]}
for ((i = start; i < total; i++)); do
  stage=${STAGES[$i]}
  name=kiln-$stage
  if [ -n "$("$kubectl" -n "$namespace" get rayjob "$name" -o name --ignore-not-found)" ]; then
    state=$(deployment_status "$name")
    case $state in
      Complete|Failed|ValidationFailed)
        echo "run-data: [$((i + 1))/$total] $stage: deleting the finished $name ($state) to run it again"
        "$kubectl" -n "$namespace" delete rayjob "$name" --wait=true
        apply "$stage"
        ;;
      *)
        echo "run-data: [$((i + 1))/$total] $stage: $name is already running (${state:-New}); waiting for it"
        ;;
    esac
  else
    apply "$stage"
  fi
  echo "run-data: [$((i + 1))/$total] $stage: waiting for $name (kubectl -n $namespace get rayjob $name -w)"
  wait_for "$name"
  echo "run-data: [$((i + 1))/$total] $stage: succeeded"
done
echo "run-data: every stage succeeded; the tokens are in /data/tokenize on the kiln-data volume"
