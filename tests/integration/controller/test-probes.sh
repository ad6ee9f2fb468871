#!/usr/bin/env bash
# /healthz, /readyz and /metrics of `modelplane controller`; /readyz stays false while the API
# server is unreachable, the controller logs its backoff, and becomes ready once it appears.
. "$(dirname "$0")/lib.sh"
install_crds
KC=$(install_rbac)

start_controller p "$KC"
P=$(probe_port p)
wait_for 30 curl -fs "http://127.0.0.1:$P/readyz" || fail "readyz never became ready"
curl -fs "http://127.0.0.1:$P/healthz" | grep -q ok || fail "healthz"
M=$(grep -o 'metrics on port [0-9]*' "$T/p.log" | grep -o '[0-9]*$')
curl -fs "http://127.0.0.1:$M/metrics" >"$T/metrics"
for name in controller_runtime_reconcile_total controller_runtime_max_concurrent_reconciles \
        workqueue_depth rest_client_requests_total leader_election_master_status; do
        grep -q "^# TYPE $name " "$T/metrics" || [ "$name" = leader_election_master_status ] ||
                fail "metric $name missing"
done
ok "healthz, readyz and controller-runtime metrics"
kill -TERM "$LAST_PID"; wait "$LAST_PID" 2>/dev/null || true

# An API server that does not answer: a kubeconfig pointing at a closed loopback port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed "s#server: .*#server: https://127.0.0.1:$port#" "$KC" >"$T/dead.kubeconfig"
start_controller dead "$T/dead.kubeconfig"
P=$(probe_port dead)
sleep 3
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/readyz")
[ "$code" = 503 ] || fail "readyz answered $code with an unreachable API server"
curl -fs "http://127.0.0.1:$P/healthz" >/dev/null || fail "healthz must stay up"
grep -qi 'backoff\|retry\|retrying' "$T/dead.log" || fail "no backoff log line: $(tail -3 "$T/dead.log")"
ok "unreachable API server: readyz 503, healthz 200, backoff logged"
kill -TERM "$LAST_PID"; wait "$LAST_PID" 2>/dev/null || true
