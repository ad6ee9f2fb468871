#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `modelplane agent` takes the exact argument list KServe's pod mutator writes (agent_injector.go:
# puller, logger and batcher flags, Go's "--flag false" form), starts the logger and the batcher
# they ask for, names the unimplemented ones (log marshaller, log batching) in one warning, serves readiness on its port, exits 0 on SIGTERM; a malformed
# SERVING_READINESS_PROBE fails the start with exit 1 and a message naming it; placement's
# --advertise-address and --drain-timeout refuse malformed values (exit 2, named).
set -euo pipefail
bin=${1:?usage: test-agent-cli.sh MODELPLANE_BINARY}
T=$(mktemp -d /tmp/mp-agent-cli-XXXXXX)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
echo "1..6"
mkdir -p "$T/models" "$T/configs"
SERVING_READINESS_PROBE='{"tcpSocket":{"port":1},"timeoutSeconds":1}' \
"$bin" agent --port 0 --listen-address 127.0.0.1 --api-watch off \
        --enable-puller --config-dir "$T/configs" --model-dir "$T/models" --component-port 8080 \
        --log-url http://logger.example --source-uri http://src --log-mode all \
        --inference-service sklearn --namespace ns --endpoint default --component predictor \
        --metadata-headers a,b --logger-tls-skip-verify false --enable-batcher --max-batchsize 32 \
        --max-latency 500 --log-batch-size 1 --log-batch-interval 0s --log-marshaller-port 9083 >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$T/out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$T/out")
[ -n "$port" ] && echo "ok 1 - starts with KServe's argument list" || { echo "not ok 1 - no port: $(cat "$T/err")"; exit 1; }
want="not implemented, ignored: --log-marshaller-port ("
grep -qF -- "$want" "$T/err" && grep -qF "logging requests and responses to http://logger.example" "$T/err" &&
        grep -qF "max batch size 32, max latency 500 ms" "$T/err" &&
        echo "ok 2 - logger and batcher on; one warning names the unimplemented flags" ||
        { echo "not ok 2 - warning: $(grep ignored "$T/err")"; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'K-Network-Probe: queue' "http://127.0.0.1:$port/")
[ "$code" = 503 ] && echo "ok 3 - not ready while the model server's probe fails (503)" ||
        { echo "not ok 3 - probe answered $code"; exit 1; }
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" = 0 ] && echo "ok 4 - exits 0 on SIGTERM" || { echo "not ok 4 - exit $rc: $(tail -5 "$T/err")"; exit 1; }
rc=0
SERVING_READINESS_PROBE='{"exec":' "$bin" agent --port 0 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "SERVING_READINESS_PROBE is not a JSON object" "$T/err" &&
        echo "ok 5 - a malformed SERVING_READINESS_PROBE fails the start, named" ||
        { echo "not ok 5 - exit $rc: $(cat "$T/err")"; exit 1; }
bad=
for args in "--advertise-address 10.0.0.1" "--advertise-address :9081" "--advertise-address h:0" \
        "--advertise-address h:99999" "--drain-timeout 0" "--drain-timeout x"; do
        rc=0
        # shellcheck disable=SC2086 # the flag and its value, split on purpose
        "$bin" agent $args >"$T/out" 2>"$T/err" || rc=$?
        { [ "$rc" = 2 ] && grep -qF "invalid ${args%% *}" "$T/err"; } || bad="$bad [$args: exit $rc]"
done
[ -z "$bad" ] && echo "ok 6 - malformed --advertise-address and --drain-timeout refused, named" ||
        { echo "not ok 6 -$bad"; exit 1; }
