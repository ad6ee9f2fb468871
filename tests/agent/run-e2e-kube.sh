#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-e2e-kube` (suites agent, apiserver): tests/agent/e2e.py --kube on its own
# test control plane with the project's CRDs (scripts/with-testenv --crds deploy/crds): the real
# `modelplane controller` writes models.json for a TrainedModel and the agent follows the
# ConfigMap through the API with the shipped deploy/agent RBAC. Skips (77) without a control
# plane (MODELPLANE_KUBECONFIG or MODELPLANE_TESTBIN, as the other apiserver tests) or venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${1:?usage: run-e2e-kube.sh MODELPLANE_BINARY [SCRIPT]}
# SCRIPT: another test of this folder on the same setup (agent-replicas: e2e_replicas.py;
# agent-kserve-tm: e2e_kserve.py, with KServe's own controller from bench/peers/kserve-tm)
script=${2:-e2e.py}
args=()
[ "$script" = e2e.py ] && args=(--kube)
if [ -z "${MODELPLANE_KUBECONFIG:-}" ] && [ -z "${MODELPLANE_TESTBIN:-}" ]; then
        echo "1..0 # SKIP no test control plane (run under scripts/with-testenv or set MODELPLANE_TESTBIN)"
        exit 0
fi
venv=$("$here/venv.sh") || { echo "1..0 # SKIP the agent test venv could not be created"; exit 0; }
if [ "$script" = e2e_kserve.py ]; then
        # KServe's own TrainedModel controller, built once and cached (minutes the first time)
        err=$(mktemp)
        if ! MODELPLANE_KSERVE_TM=$("$src/bench/peers/kserve-tm/build" 2>"$err"); then
                echo "1..0 # SKIP KServe's controller could not be built (Go or the module proxy): $(tail -1 "$err")"
                rm -f "$err"
                exit 0
        fi
        rm -f "$err"
        export MODELPLANE_KSERVE_TM
fi
export MODELPLANE_SOURCE_ROOT=$src
# CRDs are cluster-scoped: this test gets its own control plane with the project's CRDs
export MODELPLANE_TESTENV_ARGS="--crds $src/deploy/crds"
exec "$src/scripts/with-testenv" "$venv/bin/python" "$here/$script" "$bin" "${args[@]}"
