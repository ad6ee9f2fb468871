#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Admission webhook benchmark: `modelplane webhook` on 127.0.0.1 with a test CA, then wrk with 32
# concurrent TLS clients POSTing a TrainedModel AdmissionReview, half of them denied: keep-alive
# (reviews/s, p50/p99), and one connection per review (each review pays a full TLS handshake,
# which also stats the certificate files), with the server's CPU time per review; then one client
# in sequence, a new connection per review, with full handshakes and resuming the session ticket
# (bench/webhook/resume.py). Reports the server's RSS after start, after the runs, and the peak.
#   bench/webhook/run.sh [BUILD_DIR] [DURATION]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
build=${1:-$root/build-webhook}
dur=${2:-10s}
bin=$build/src/cmd/modelplane
work=$(mktemp -d /tmp/webhook-bench-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT INT TERM

"$root/tests/webhook/gen-certs.sh" "$work" serving 3001
cp "$work/serving.crt" "$work/tls.crt"
cp "$work/serving.key" "$work/tls.key"
"$bin" webhook --webhook-bind-address 127.0.0.1 --webhook-port 0 --webhook-cert-dir "$work" \
        --log-level info >"$work/server.log" 2>&1 &
pid=$!
port=
i=0
until [ -n "$port" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { echo "server did not start"; cat "$work/server.log"; exit 1; }
        sleep 0.01
        port=$(sed -n 's/.*listening on https:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$work/server.log")
done
url="https://127.0.0.1:$port/validate-serving-kserve-io-v1alpha1-trainedmodel"
echo "RSS after start: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$pid/status)"

# sanity: one allowed and one denied answer
code=$(curl -s --cacert "$work/ca.crt" -H 'Content-Type: application/json' \
        --data-binary @"$here/review-allowed.json" "$url" | grep -c '"allowed":true' || true)
[ "$code" = 1 ] || { echo "unexpected answer"; exit 1; }

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

run() {
        label=$1
        shift
        t0=$(cpu_ticks)
        out=$(wrk -t2 -c32 -d"$dur" --latency -s "$here/review.lua" "$@" "$url")
        t1=$(cpu_ticks)
        n=$(echo "$out" | awk '/requests in/ {print $1}')
        cpu=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" 'BEGIN {printf "%.3f", n ? t * 1000 / hz / n : 0}')
        rps=$(echo "$out" | awk '/^Requests\/sec/ {print $2}')
        p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
        p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
        errs=$(echo "$out" | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
        printf '%-32s %10s reviews/s   p50 %-9s p99 %-9s server CPU %s ms/review %s\n' "$label" \
                "$rps" "$p50" "$p99" "$cpu" "$errs"
}

run "32 TLS clients, keep-alive"
run "32 TLS clients, new conn each" -H "Connection: close"
for mode in full resume; do
        set -- $(python3 "$here/resume.py" "$port" "$work/ca.crt" "$here/review-allowed.json" 200 "$mode")
        printf '%-32s %10s reviews/s   (%s of 200 connections resumed)\n' "1 client, sequential, $mode" "$1" "$2"
done
echo "RSS after the runs: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$pid/status), peak $(awk '/VmHWM/ {print $2 " " $3}' /proc/$pid/status)"
