#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `transfer-async-upload` (suite transfer): the agent test venv (tests/agent/venv.sh:
# moto, boto3) and crane (bench/peers/crane/build: go-containerregistry v0.22.1, built once with
# the project's Go-build cache; $MODELPLANE_CRANE when set, as scripts/test sets it). Without Go
# (or without the venv) the test is a skip (77) with its reason; a crane build that fails with Go
# present is a failure. Then tests/transfer/async_upload.py (TAP).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run-async-upload.sh MODELPLANE_BINARY}
venv=$("$here/../agent/venv.sh") || exit $?
crane=${MODELPLANE_CRANE:-}
if [ -z "$crane" ]; then
        if ! command -v go >/dev/null; then
                echo "1..0 # SKIP go is not installed: crane (bench/peers/crane) cannot be built"
                exit 77
        fi
        crane=$("$here/../../bench/peers/crane/build") || { echo "Bail out! crane did not build (bench/peers/crane/build)"; exit 1; }
fi
exec "$venv/bin/python" "$here/async_upload.py" "$bin" "$crane"
