#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-e2e` (suite agent): creates/reuses the venv (tests/agent/venv.sh; 77 = skip
# with the reason when it cannot), then runs tests/agent/e2e.py (TAP) against the built binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run-e2e.sh MODELPLANE_BINARY}
venv=$("$here/venv.sh") || exit $?
# the GCS emulator for the gs:// steps (those skip, named, when it cannot be installed)
MODELPLANE_GCS_EMULATOR=$("$here/gcs-emulator.sh" "$venv") || MODELPLANE_GCS_EMULATOR=
export MODELPLANE_GCS_EMULATOR
# Azurite (npm) for the Azure step (skipped, named, when it cannot be installed)
MODELPLANE_AZURITE=$("$here/azurite.sh") || MODELPLANE_AZURITE=
export MODELPLANE_AZURITE
exec "$venv/bin/python" "$here/e2e.py" "$bin"
