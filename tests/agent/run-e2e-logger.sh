#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-logger` (suite agent): the venv (tests/agent/venv.sh) with the CloudEvents SDK
# added (tests/agent/cloudevents.sh); 77 = skip with the reason when either cannot be had. Then
# tests/agent/e2e_logger.py (TAP) against the built binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run-e2e-logger.sh MODELPLANE_BINARY}
venv=$("$here/venv.sh") || exit $?
"$here/cloudevents.sh" "$venv" >/dev/null || exit $?
exec "$venv/bin/python" "$here/e2e_logger.py" "$bin"
