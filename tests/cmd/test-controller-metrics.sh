#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The TrainedModel controller's own counters on /metrics (issue #12): the reconciler's passes,
# skipped passes, write Events (posted and skipped), writes by kind and 429s, next to the Event
# recorder's. The API server is unreachable: the metrics listener starts before the first list,
# so every family is there, at 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cat >"$T/kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
: >"$T/out"; : >"$T/err" # before the start: the background job opens them only once it runs
"$MP" controller --kubeconfig "$T/kubeconfig" --metrics-bind-address 127.0.0.1:0 \
        --health-probe-bind-address 127.0.0.1:0 --log-format text >>"$T/out" 2>>"$T/err" </dev/null &
PIDS+=($!)
port=
for _ in $(seq 600); do
        port=$(sed -n 's/.*Serving metrics on port \([0-9][0-9]*\).*/\1/p' "$T/out" "$T/err" | head -1)
        [ -n "$port" ] && break
        kill -0 "${PIDS[-1]}" 2>/dev/null || { cat "$T/err" >&2; fail "controller exited"; }
        sleep 0.05
done
[ -n "$port" ] || fail "controller did not serve metrics within 30 s"
curl -fsS "http://127.0.0.1:$port/metrics" >"$T/metrics" || fail "GET /metrics"
for family in modelplane_trainedmodel_passes_total modelplane_trainedmodel_plans_total \
        modelplane_trainedmodel_passes_skipped_total \
        modelplane_trainedmodel_write_events_total \
        modelplane_trainedmodel_write_events_skipped_total \
        modelplane_trainedmodel_configmap_writes_total modelplane_trainedmodel_metadata_writes_total \
        modelplane_trainedmodel_status_writes_total modelplane_trainedmodel_deletes_total \
        modelplane_kube_client_throttled_total modelplane_events_dropped_total \
        modelplane_events_aggregated_total modelplane_placement_assignment_writes_total \
        modelplane_placement_moves_total modelplane_placement_status_writes_total; do
        grep -q "^# TYPE $family counter$" "$T/metrics" || fail "no counter $family: $(cat "$T/metrics")"
        grep -qE "^$family(\{[^}]*\})? 0$" "$T/metrics" ||
                fail "$family is not 0: $(grep "^$family" "$T/metrics")"
done
echo "ok: the controller's counters on /metrics"
