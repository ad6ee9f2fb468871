#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --max-connections-per-ip and --trusted-proxy on the servers that have them (registry, catalog,
# ui): with a limit of 2 and two connections held open, the next connection from the same
# address gets 429 with Retry-After (was 503 with a fixed limit of 256); with the address in
# --trusted-proxy it is served by the handler.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=${MODELPLANE_SOURCE_ROOT:?}

# third PORT PATH — holds two idle connections, then prints "STATUS RETRY-AFTER" of a GET PATH
third() {
        python3 - "$1" "$2" <<'PY'
import socket, sys, time
port, path = int(sys.argv[1]), sys.argv[2]
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
time.sleep(0.3)  # accepted and counted by the server
c = socket.create_connection(("127.0.0.1", port), timeout=5)
c.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
data = b""
while True:
    try:
        b = c.recv(65536)
    except OSError:
        break
    if not b:
        break
    data += b
head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
status = head[0].split(" ")[1] if head and head[0].startswith("HTTP/1.1 ") else "none"
retry = next((h.split(":", 1)[1].strip() for h in head[1:] if h.lower().startswith("retry-after:")), "-")
print(status, retry)
PY
}

check() { # NAME PATH ARGS...
        local name=$1 path=$2 got
        shift 2
        start "$name" "$@" --max-connections-per-ip 2
        got=$(third "$PORT" "$path")
        [ "$got" = "429 1" ] || fail "$name: the third connection got '$got', not '429 1'"
        kill "${PIDS[-1]}"; wait "${PIDS[-1]}" || true
        start "$name-trusted" "$@" --max-connections-per-ip 2 --trusted-proxy 10.0.0.0/8,127.0.0.1
        got=$(third "$PORT" "$path")
        # served: the handler's own answer (the console without a registry answers 503 itself)
        case ${got%% *} in
        429 | none) fail "$name: a trusted proxy's third connection got '$got'" ;;
        esac
        kill "${PIDS[-1]}"; wait "${PIDS[-1]}" || true
        echo "ok: $name: 429 with Retry-After past the per-address limit, trusted proxies exempt"
}

check registry /api/model_registry/v1alpha3/registered_models registry -n 127.0.0.1 -p 0 \
        --database "$T/r.db"
check catalog /healthz catalog --listen 127.0.0.1:0 \
        --catalogs-path "$SRC/tests/fixtures/catalog/sources.yaml"
check ui / ui --listen 127.0.0.1:0 --no-kube
# the flags' errors are usage errors naming the value
for cmd in "registry -d $T/x.db" "catalog" "ui --no-kube"; do
        # shellcheck disable=SC2086
        if "$MP" $cmd --trusted-proxy 10.0.0.0/33 >/dev/null 2>"$T/err"; then
                fail "$cmd: a bad --trusted-proxy was accepted"
        fi
        grep -q "invalid --trusted-proxy '10.0.0.0/33'" "$T/err" || fail "$cmd: $(cat "$T/err")"
done
echo "ok: bad --trusted-proxy values are usage errors"
