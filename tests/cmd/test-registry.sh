#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `modelplane registry` as a process: one access-log line per request (method, path, status,
# duration, bytes) at info, 5xx at warn; /metrics counts the responses by status class; a
# --database file that is not SQLite, or a damaged one, fails the start with a message naming
# the file and "not a database".
set -euo pipefail
. "$(dirname "$0")/lib.sh"
API=/api/model_registry/v1alpha3

# ---- access log and metrics on SQLite
start reg registry -n 127.0.0.1 -p 0 --database "$T/ok.db" --log-format text
B=http://127.0.0.1:$PORT
code() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
[ "$(code -X POST "$B$API/registered_models" -H 'Content-Type: application/json' \
        -d '{"name":"iris"}')" = 201 ] || fail "create: $(cat "$T/body")"
[ "$(code "$B$API/registered_models")" = 200 ] || fail "list"
size=$(stat -c %s "$T/body")
[ "$(code "$B$API/registered_models/999999")" = 404 ] || fail "missing id is not 404"
[ "$(code -X POST "$B$API/registered_models" -H 'Content-Type: application/json' -d '{')" = 400 ] ||
        fail "bad JSON is not 400"
[ "$(code "$B/metrics")" = 200 ] || fail "/metrics"
grep -qx 'modelplane_registry_http_responses_total{code="2xx"} 2' "$T/body" || fail "2xx: $(cat "$T/body")"
grep -qx 'modelplane_registry_http_responses_total{code="4xx"} 2' "$T/body" || fail "4xx: $(cat "$T/body")"
grep -qx 'modelplane_registry_http_responses_total{code="5xx"} 0' "$T/body" || fail "5xx: $(cat "$T/body")"
grep -q '^# TYPE modelplane_registry_http_responses_total counter$' "$T/body" || fail "no TYPE line"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" || true
log=$T/reg.err
grep -qE " info +registry: POST $API/registered_models status=201 duration_ms=[0-9]+\.[0-9]{3} bytes=[1-9][0-9]*\$" "$log" ||
        fail "no access-log line for the create: $(cat "$log")"
grep -qE " info +registry: GET $API/registered_models status=200 duration_ms=[0-9.]+ bytes=$size\$" "$log" ||
        fail "the list's line lacks its byte count $size: $(cat "$log")"
grep -qE " info +registry: GET $API/registered_models/999999 status=404 " "$log" || fail "no 404 line"
grep -qE " info +registry: POST $API/registered_models status=400 " "$log" || fail "no 400 line"
[ "$(grep -c 'status=' "$log")" = 4 ] || fail "not one line per API request: $(grep status= "$log")"

# ---- a 5xx is logged at warn and counted: PostgreSQL that does not answer -> 503 meanwhile
if "$MP" registry --help | grep -q 'postgres://'; then
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        "$MP" registry -n 127.0.0.1 -p "$port" --log-format text \
                --database "postgresql://nobody@127.0.0.1:$dead/x?sslmode=disable&connect_timeout=2" \
                >"$T/pg.out" 2>"$T/pg.err" &
        PIDS+=($!)
        for _ in $(seq 200); do
                c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$API/registered_models" || true)
                [ "$c" = 503 ] && break
                sleep 0.05
        done
        [ "$c" = 503 ] || fail "no 503 while the database is down (got $c): $(cat "$T/pg.err")"
        curl -s "http://127.0.0.1:$port/metrics" >"$T/m"
        grep -qE '^modelplane_registry_http_responses_total\{code="5xx"\} [1-9]' "$T/m" || fail "5xx not counted: $(cat "$T/m")"
        kill "${PIDS[-1]}"; wait "${PIDS[-1]}" || true
        grep -qE " warn +registry: GET $API/registered_models status=503 duration_ms=[0-9.]+ bytes=[1-9]" "$T/pg.err" ||
                fail "the 503 is not logged at warn: $(cat "$T/pg.err")"
fi

# ---- a --database that is not SQLite, or damaged: exit 1 naming the file, "not a database"
head -c 8192 /dev/urandom >"$T/random.db"
printf 'model registry\n' >"$T/text.db"
python3 - "$T/damaged.db" <<'PY'
import sqlite3, sys
p = sys.argv[1]
c = sqlite3.connect(p)
c.execute("create table t(x)")
c.executemany("insert into t values(?)", [("x" * 500,)] * 100)
c.commit(); c.close()
d = bytearray(open(p, "rb").read())
d[100:4000] = b"\xff" * 3900          # page 1 after the header: the schema's b-tree
open(p, "wb").write(d)
PY
for f in random text damaged; do
        rc=0
        timeout 60 "$MP" registry -n 127.0.0.1 -p 0 --database "$T/$f.db" --log-format text \
                >"$T/$f.out" 2>"$T/$f.err" || rc=$?
        [ "$rc" = 1 ] || fail "$f.db: exit $rc, not 1"
        grep -qF "$T/$f.db: not a database" "$T/$f.err" || fail "$f.db: $(cat "$T/$f.err")"
        ! grep -q '^listening on' "$T/$f.out" || fail "$f.db: it said it listens"
done
cmp -s <(printf 'model registry\n') "$T/text.db" || fail "the text file was modified"
echo "ok: access log, metrics, not-a-database errors"
