#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-replicas` (suites agent, apiserver): tests/agent/e2e_replicas.py on its own
# test control plane with the project's CRDs: drift repair of a hand-edited models.json, and two
# agents (two Pod objects, two MLServers) aggregated into ModelLoaded "n/m replicas loaded", with
# the shipped controller and agent RBAC. Skips (77) without a control plane or the agent venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${1:?usage: run-e2e-replicas.sh MODELPLANE_BINARY}
if [ -z "${MODELPLANE_KUBECONFIG:-}" ] && [ -z "${MODELPLANE_TESTBIN:-}" ]; then
        echo "1..0 # SKIP no test control plane (run under scripts/with-testenv or set MODELPLANE_TESTBIN)"
        exit 0
fi
venv=$("$here/venv.sh") || { echo "1..0 # SKIP the agent test venv could not be created"; exit 0; }
export MODELPLANE_SOURCE_ROOT=$src
export MODELPLANE_TESTENV_ARGS="--crds $src/deploy/crds"
exec "$src/scripts/with-testenv" "$venv/bin/python" "$here/e2e_replicas.py" "$bin"
