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
# SCRIPT: another test of this folder on the same setup (agent-replicas: e2e_replicas.py)
script=${2:-e2e.py}
args=()
[ "$script" = e2e.py ] && args=(--kube)
if [ -z "${MODELPLANE_KUBECONFIG:-}" ] && [ -z "${MODELPLANE_TESTBIN:-}" ]; then
        echo "1..0 # SKIP no test control plane (run under scripts/with-testenv or set MODELPLANE_TESTBIN)"
        exit 0
fi
venv=$("$here/venv.sh") || { echo "1..0 # SKIP the agent test venv could not be created"; exit 0; }
export MODELPLANE_SOURCE_ROOT=$src
# CRDs are cluster-scoped: this test gets its own control plane with the project's CRDs
export MODELPLANE_TESTENV_ARGS="--crds $src/deploy/crds"
exec "$src/scripts/with-testenv" "$venv/bin/python" "$here/$script" "$bin" "${args[@]}"
