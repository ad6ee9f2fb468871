#!/usr/bin/env bash
# The informer against a real kube-apiserver (its own control plane, watch cache off so that an
# etcd compaction reaches clients as 410 Gone):
#   1. it sees creates, updates and deletes and ends equal to the server;
#   2. after its resourceVersion is compacted away and kube-apiserver is killed mid-watch, it gets
#      410, relists, and ends equal to the server: nothing missed, nothing phantom;
#   3. after kube-apiserver is killed and restarted while objects change, it recovers the same way.
set -euo pipefail
: "${PROBE:?PROBE must point at the informer-probe binary}"
ROOT=${MODELPLANE_SOURCE_ROOT:?}
if [ -z "${MODELPLANE_TESTBIN:-}" ] && [ -z "${MODELPLANE_KUBECONFIG:-}" ]; then
        echo "SKIP: no test control plane binaries (run under scripts/test or scripts/with-testenv)"
        exit 77
fi
export PATH="${MODELPLANE_TESTBIN:-$("$ROOT/scripts/testbin-build")}:$PATH"
T=$(mktemp -d "${TMPDIR:-/tmp}/mp-informer.XXXXXX")
PPID_PROBE=
cleanup() {
        [ -n "$PPID_PROBE" ] && kill "$PPID_PROBE" 2>/dev/null || true
        "$ROOT/scripts/testenv" stop "$T/te" >/dev/null 2>&1 || true
        rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*" >&2; [ -f "$T/probe.log" ] && tail -20 "$T/probe.log" >&2; exit 1; }
ok() { echo "ok - $*"; }

"$ROOT/scripts/testenv" start "$T/te" --no-watch-cache >/dev/null 2>&1 || fail "testenv start"
export KUBECONFIG="$T/te/kubeconfig"
NS=probe
kubectl create namespace $NS >/dev/null

server_view() {
        kubectl -n $NS get cm -l app=probe -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.resourceVersion}{"\n"}{end}' | sort
}
probe_view() { # asks the probe for a dump and prints its object lines
        rm -f "$T/dump"
        kill -USR1 "$PPID_PROBE" || fail "the probe is gone"
        for _ in $(seq 50); do [ -f "$T/dump" ] && break; sleep 0.1; done
        grep -v '^#' "$T/dump" || true
}
converges() { # waits until the probe's view equals the server's
        for _ in $(seq 150); do
                [ "$(probe_view)" = "$(server_view)" ] && return 0
                sleep 0.2
        done
        echo "server:"; server_view; echo "probe:"; probe_view
        return 1
}
relists() { grep -o 'relists=[0-9]*' "$T/dump" | cut -d= -f2; }

for i in $(seq 1 5); do kubectl -n $NS create cm "obj-$i" --from-literal=v=0 >/dev/null; done
kubectl -n $NS label cm obj-1 obj-2 obj-3 obj-4 obj-5 app=probe >/dev/null
"$PROBE" "$KUBECONFIG" $NS app=probe "$T/dump" >"$T/probe.log" 2>&1 &
PPID_PROBE=$!
for _ in $(seq 100); do grep -q 'probe started' "$T/probe.log" && break; sleep 0.1; done
grep -q 'probe started' "$T/probe.log" || fail "the probe did not start"
converges || fail "initial list"
kubectl -n $NS patch cm obj-1 -p '{"data":{"v":"1"}}' >/dev/null
kubectl -n $NS delete cm obj-2 >/dev/null
kubectl -n $NS create cm obj-6 >/dev/null && kubectl -n $NS label cm obj-6 app=probe >/dev/null
converges || fail "watch events"
ok "informer follows creates, updates and deletes"

# 2. Advance etcd past the probe's resourceVersion with writes it does not see and compact: its
#    next watch (the probe's watches end every 3 s) starts from a compacted resourceVersion and
#    must get 410 Expired, relist, and catch up.
before=$(probe_view >/dev/null; relists)
for i in $(seq 1 30); do kubectl -n $NS create cm "noise-$i" >/dev/null; done
"$ROOT/scripts/testenv" compact "$T/te" >/dev/null || fail "compact"
for _ in $(seq 100); do grep -q 'expired' "$T/probe.log" && break; sleep 0.1; done
kubectl -n $NS delete cm obj-3 >/dev/null
kubectl -n $NS patch cm obj-4 -p '{"data":{"v":"2"}}' >/dev/null
kubectl -n $NS create cm obj-7 >/dev/null && kubectl -n $NS label cm obj-7 app=probe >/dev/null
converges || fail "after compaction and restart"
after=$(relists)
[ "$after" -gt "$before" ] || fail "no relist after the compaction (relists $before -> $after)"
grep -q 'expired' "$T/probe.log" || fail "no 410 Expired was seen"
ok "compacted resourceVersion: 410 Expired, relist, cache equal to the server ($before -> $after relists)"

# 3. kube-apiserver killed and restarted mid-watch, with changes right after it is back.
"$ROOT/scripts/testenv" restart-apiserver "$T/te" >/dev/null || fail "restart-apiserver"
kubectl -n $NS delete cm obj-1 >/dev/null
kubectl -n $NS create cm obj-8 >/dev/null && kubectl -n $NS label cm obj-8 app=probe >/dev/null
converges || fail "after a restart mid-watch"
ok "kube-apiserver restart mid-watch: no missed and no phantom objects"
