#!/usr/bin/env bash
# bench/mrlink/run.sh — the model registry InferenceService controller (docs/mrlink.md) against a
# real local control plane and a real `modelplane registry` (SQLite) on loopback.
#
#   BENCH_N=1000 BUILD=build [BENCH_CTRL_ARGS="--kube-api-qps 500 --kube-api-burst 1000"] bench/mrlink/run.sh
#
# Creates BENCH_N InferenceServices (RM-id label + URL annotation) at once and reports: seconds
# until all carry the inference-service-id label, registry calls per InferenceService on create,
# on an update of every InferenceService that changes nothing the controller reads (the resync
# path: on_update(obj, obj)), and after a controller restart (cold: no fingerprints), from the
# controller's modelplane_mrlink_* counters. Timing is wall-clock on this machine, reported only.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${BENCH_N:-1000}
BUILD=${BUILD:-build}
TESTBIN=$(scripts/testbin-build)
export PATH="$TESTBIN:$PATH"
ninja -C "$BUILD" src/cmd/modelplane >/dev/null
MP=$PWD/$BUILD/src/cmd/modelplane
D=$(mktemp -d "${TMPDIR:-/tmp}/modelplane-bench-mrlink.XXXXXX")
REG_PID= CTRL_PID=
cleanup() {
        [ -n "$CTRL_PID" ] && kill "$CTRL_PID" 2>/dev/null && wait "$CTRL_PID" 2>/dev/null || true
        [ -n "$REG_PID" ] && kill "$REG_PID" 2>/dev/null && wait "$REG_PID" 2>/dev/null || true
        scripts/testenv stop "$D/testenv" >/dev/null 2>&1 || true
        rm -rf "$D"
}
trap cleanup EXIT
trap "exit 130" INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
labelled() { kubectl get inferenceservices -n bench -l modelregistry.kubeflow.org/inference-service-id -o name | wc -l; }

scripts/testenv start "$D/testenv" --crds deploy/crds >/dev/null 2>&1
export KUBECONFIG="$D/testenv/kubeconfig"

RPORT=$(free_port)
"$MP" registry -n 127.0.0.1 -p "$RPORT" -d "$D/mr.db" >"$D/registry.log" 2>&1 &
REG_PID=$!
REG=http://127.0.0.1:$RPORT/api/model_registry/v1alpha3
for _ in $(seq 100); do curl -sf "$REG/registered_models" >/dev/null && break; sleep 0.1; done
RM=$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"name":"bench"}' "$REG/registered_models" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
kubectl create namespace bench >/dev/null

export INFERENCE_SERVICE_CONTROLLER=managed
export NAMESPACE_LABEL=modelregistry.kubeflow.org/namespace NAME_LABEL=modelregistry.kubeflow.org/name
export URL_ANNOTATION=modelregistry.kubeflow.org/url
export INFERENCE_SERVICE_ID_LABEL=modelregistry.kubeflow.org/inference-service-id
export MODEL_VERSION_ID_LABEL=modelregistry.kubeflow.org/model-version-id
export REGISTERED_MODEL_ID_LABEL=modelregistry.kubeflow.org/registered-model-id
export FINALIZER=modelregistry.kubeflow.org/finalizer
export SERVICE_ANNOTATION=routing.kubeflow.org/external-address-rest
export REGISTRIES_NAMESPACE=bench SKIP_TLS_VERIFY=false
MPORT=$(free_port)
PPORT=$(free_port)
start_controller() {
        "$MP" controller --kubeconfig "$KUBECONFIG" --namespace bench \
                --metrics-bind-address "127.0.0.1:$MPORT" --health-probe-bind-address "127.0.0.1:$PPORT" \
                ${BENCH_CTRL_ARGS:-} >>"$D/controller.log" 2>&1 &
        CTRL_PID=$!
        for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PPORT/readyz" >/dev/null && return; sleep 0.1; done
        echo "controller not ready" >&2
        exit 1
}
stop_controller() { kill "$CTRL_PID"; wait "$CTRL_PID" 2>/dev/null || true; CTRL_PID=; }
start_controller

python3 - "$N" "$RM" "http://127.0.0.1:$RPORT" >"$D/isvcs.yaml" <<'PY'
import sys
n, rm, url = int(sys.argv[1]), sys.argv[2], sys.argv[3]
for i in range(n):
    print(f"""---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: isvc-{i}
  namespace: bench
  labels:
    modelregistry.kubeflow.org/registered-model-id: "{rm}"
  annotations:
    modelregistry.kubeflow.org/url: {url}
spec:
  predictor:
    model:
      modelFormat: {{name: onnx}}
      runtime: kserve-ovms
      storageUri: s3://bench/{i}""")
PY

t0=$(now)
kubectl create -f "$D/isvcs.yaml" >/dev/null
t_created=$(now)
while [ "$(labelled)" -lt "$N" ]; do sleep 0.5; done
t1=$(now)
calls_create=$(metric modelplane_mrlink_registry_calls_total)
writes_create=$(metric modelplane_mrlink_isvc_writes_total)
errors_create=$(metric modelplane_mrlink_registry_errors_total)
skipped0=$(metric modelplane_mrlink_skipped_total)

# every InferenceService updated, nothing the controller reads changed
kubectl annotate inferenceservices -n bench --all bench/touched=1 --overwrite >/dev/null
want=$(python3 -c "print(int(float('$skipped0')) + $N)")
for _ in $(seq 600); do
        s=$(metric modelplane_mrlink_skipped_total)
        python3 -c "import sys; sys.exit(0 if float('$s') >= $want else 1)" && break
        sleep 0.2
done
calls_touch=$(python3 -c "print(int(float('$(metric modelplane_mrlink_registry_calls_total)') - float('$calls_create')))")

# restart: no fingerprints, no remembered serving environment
stop_controller
start_controller
prev=-1
for _ in $(seq 600); do
        c=$(metric modelplane_mrlink_registry_calls_total)
        [ "$c" = "$prev" ] && python3 -c "import sys; sys.exit(0 if float('$c') >= $N else 1)" && break
        prev=$c
        sleep 1
done
calls_restart=$(metric modelplane_mrlink_registry_calls_total)
rss=$(awk '/VmRSS/ {print $2}' "/proc/$CTRL_PID/status")

python3 - <<PY
n = $N
print(f"InferenceServices:                  {n}")
print(f"kubectl create of all:              {$t_created - $t0:.1f} s")
print(f"until all carry the id label:       {$t1 - $t0:.1f} s (from the start of the create)")
print(f"registry calls per ISVC, create:    {float('$calls_create') / n:.2f} (errors {float('$errors_create'):.0f})")
print(f"ISVC writes per ISVC, create:       {float('$writes_create') / n:.2f} (finalizer + label)")
print(f"registry calls, no-op update of all: {int('$calls_touch')}")
print(f"registry calls per ISVC, restart:   {float('$calls_restart') / n:.2f}")
print(f"controller RSS after restart:       {int('$rss') / 1024:.1f} MiB")
PY
