#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs the CloudEvents Python SDK (cloudevents from PyPI, pinned) into the agent test venv
# given as $1 when it is not there yet. Its HTTP binding parses what the agent's request logger
# sends. An addition to the venv, not part of its stamp (tests/agent/venv.sh), as
# gcs-emulator.sh. Exits 77 (skip) with the reason when pip cannot install it.
set -euo pipefail
CLOUDEVENTS_VERSION=1.12.0
venv=${1:?usage: cloudevents.sh VENV}
if [ "$("$venv/bin/pip" show cloudevents 2>/dev/null | sed -n 's/^Version: //p')" != "$CLOUDEVENTS_VERSION" ]; then
        exec 9>"$venv.lock"
        flock 9
        "$venv/bin/pip" install -q "cloudevents==$CLOUDEVENTS_VERSION" >&2 ||
                { echo "SKIP: pip could not install cloudevents==$CLOUDEVENTS_VERSION" >&2; exit 77; }
fi
echo "$venv/bin/python3"
