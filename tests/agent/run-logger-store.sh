#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-logger-store` (suite agent): the venv (tests/agent/venv.sh: moto, boto3; the
# GCS emulator and Azurite are added by their scripts, each step skipped with the reason when it
# cannot be had); 77 = skip when the venv cannot be made. Then tests/agent/logger_store.py (TAP).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run-logger-store.sh MODELPLANE_BINARY}
venv=$("$here/venv.sh") || exit $?
exec "$venv/bin/python" "$here/logger_store.py" "$bin"
