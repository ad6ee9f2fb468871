#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs the GCS emulator (gcp-storage-emulator from PyPI, pinned; it speaks the GCS JSON API)
# into the agent test venv given as $1 when it is not there yet, and prints its executable.
# An addition to the venv, not part of its stamp (tests/agent/venv.sh), so that venv.sh never
# rebuilds the venv for it. Exits 77 (skip) with the reason when pip cannot install it.
set -euo pipefail
GCS_EMULATOR_VERSION=2026.7.19
venv=${1:?usage: gcs-emulator.sh VENV}
exe=$venv/bin/gcp-storage-emulator
if [ ! -x "$exe" ] || [ "$("$venv/bin/pip" show gcp-storage-emulator 2>/dev/null | sed -n 's/^Version: //p')" != "$GCS_EMULATOR_VERSION" ]; then
        exec 9>"$venv.lock"
        flock 9
        "$venv/bin/pip" install -q "gcp-storage-emulator==$GCS_EMULATOR_VERSION" >&2 ||
                { echo "SKIP: pip could not install gcp-storage-emulator==$GCS_EMULATOR_VERSION" >&2; exit 77; }
fi
echo "$exe"
