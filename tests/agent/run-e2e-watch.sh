#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-watch` (suites agent, apiserver): tests/agent/e2e_watch.py on its own test
# control plane (scripts/with-testenv; the test restarts its kube-apiserver and compacts its
# etcd): the agent's ConfigMap watch across API-server restarts with a lagging mounted file.
# SCRIPT: another test of this folder on the same setup (agent-placement: e2e_placement.py).
# Python's standard library only (no venv). Skipped (TAP "1..0 # SKIP") without a control plane.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
bin=${1:?usage: run-e2e-watch.sh MODELPLANE_BINARY [SCRIPT]}
script=${2:-e2e_watch.py}
if [ -z "${MODELPLANE_KUBECONFIG:-}" ] && [ -z "${MODELPLANE_TESTBIN:-}" ]; then
        echo "1..0 # SKIP no test control plane (run under scripts/with-testenv or set MODELPLANE_TESTBIN)"
        exit 0
fi
export MODELPLANE_SOURCE_ROOT=$src
exec "$src/scripts/with-testenv" python3 "$here/$script" "$bin"
