#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# schemathesis (PyPI) over the upstream catalog OpenAPI, against `modelplane catalog` loaded with
# tests/fixtures/catalog; the only check is "no 5xx" (not_a_server_error). Bounded run.
#   tests/catalog/schemathesis.sh [BUILD_DIR] [SPEC] [MAX_EXAMPLES]
# Env: SCHEMATHESIS=/path/to/schemathesis (else a venv is created in ~/.cache/modelplane, unless
# CATALOG_ST_NO_INSTALL=1, as under `meson test`, where a missing schemathesis is a skip).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build-catalog}
spec=${2:-$src/../shared/fixtures/model-registry/openapi/catalog.yaml}
examples=${3:-25}
[ -f "$spec" ] || { echo "SKIP: no OpenAPI spec at $spec"; exit 77; }

st=${SCHEMATHESIS:-}
if [ -z "$st" ]; then
        venv=${XDG_CACHE_HOME:-$HOME/.cache}/modelplane/schemathesis-venv
        if [ ! -x "$venv/bin/schemathesis" ]; then
                if [ "${CATALOG_ST_NO_INSTALL:-0}" = 1 ]; then
                        echo "SKIP: schemathesis not installed (set SCHEMATHESIS or run this script by hand)"
                        exit 77
                fi
                python3 -m venv "$venv"
                "$venv/bin/pip" install -q schemathesis
        fi
        st=$venv/bin/schemathesis
fi

work=$(mktemp -d /tmp/catalog-st-XXXXXX)
"$build/src/cmd/modelplane" catalog --listen 127.0.0.1:0 --log-level warn \
        --catalogs-path "$src/tests/fixtures/catalog/sources.yaml" >"$work/out" 2>"$work/err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM
i=0
until grep -q '^listening on' "$work/out" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 500 ] || { echo "server did not start"; cat "$work/err"; exit 1; }
        sleep 0.02
done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/out")

"$st" run "$spec" --url "http://127.0.0.1:$port" \
        --checks not_a_server_error \
        --max-examples "$examples" --workers 1 --request-timeout 10 \
        --suppress-health-check all
