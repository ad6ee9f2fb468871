#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `modelplane catalog` as a process: /healthz and /readyz answer 200 for probes (GET and HEAD;
# other methods 405), beside the catalog API.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=${MODELPLANE_SOURCE_ROOT:?}

start cat catalog --listen 127.0.0.1:0 --catalogs-path "$SRC/tests/fixtures/catalog/sources.yaml"
B=http://127.0.0.1:$PORT
for p in /healthz /readyz; do
        [ "$(curl -s -o "$T/body" -w '%{http_code}' "$B$p")" = 200 ] || fail "GET $p"
        [ "$(cat "$T/body")" = ok ] || fail "GET $p body: $(cat "$T/body")"
        [ "$(curl -s -I -o /dev/null -w '%{http_code}' "$B$p")" = 200 ] || fail "HEAD $p"
        [ "$(curl -s -X POST -D "$T/h" -o /dev/null -w '%{http_code}' "$B$p")" = 405 ] || fail "POST $p"
        grep -qi '^Allow: GET, HEAD' "$T/h" || fail "405 without Allow: $(cat "$T/h")"
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/api/model_catalog/v1alpha1/sources")" = 200 ] ||
        fail "the catalog API does not answer beside the probes"
echo "ok: catalog probes"
