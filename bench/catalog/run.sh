#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Catalog benchmark: load N models (default 10000), report load time and RSS, then p50/p99 with
# wrk (64 connections) for a list with filterQuery, a q search and a get; then the same list while
# the catalog file is replaced RELOADS times (default 5), with the 5xx count and RSS after it.
#   bench/catalog/run.sh [BUILD_DIR] [N] [DURATION] [RELOADS]
# MODELPLANE=path/to/binary runs another build (for before/after); PORT=n picks the port.
# CATALOG_ARGS: extra `modelplane catalog` arguments (e.g. --threads 1).
# SERVER_CPUS / CLIENT_CPUS (taskset -c lists, e.g. 0 and 1) pin the server and wrk to their own
# cores: on a 2-core machine wrk otherwise preempts the server and its p99 measures the scheduler.
# WRK_THREADS: wrk's threads (default 2; 1 when wrk has one core).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-catalog}
n=${2:-10000}
dur=${3:-10s}
reloads=${4:-5}
bin=${MODELPLANE:-$build/src/cmd/modelplane}
port=${PORT:-18181}
work=$(mktemp -d /tmp/catalog-bench-XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM

python3 "$here/gen.py" "$work" "$n"
echo "catalog files: $(du -ch "$work"/models*.yaml | tail -1 | cut -f1), $n models"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)${SERVER_CPUS:+, server on CPUs $SERVER_CPUS}${CLIENT_CPUS:+, wrk on CPUs $CLIENT_CPUS}"

start=$(date +%s%N)
# taskset execs its command: $! stays the server's pid
server_pin=${SERVER_CPUS:+taskset -c $SERVER_CPUS}
client_pin=${CLIENT_CPUS:+taskset -c $CLIENT_CPUS}
# wrk's threads (WRK_THREADS, default 2): pinned to one core, two of them take turns on it and
# each one's connections wait out the other's time slice
wrk_threads=${WRK_THREADS:-2}
# shellcheck disable=SC2086 # CATALOG_ARGS is a list of arguments
$server_pin "$bin" catalog --listen "127.0.0.1:$port" --catalogs-path "$work/sources.yaml" \
        --log-level warn ${CATALOG_ARGS:-} >"$work/server.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$port/api/model_catalog/v1alpha1"
i=0
until curl -sf "$base/sources" >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -lt 3000 ] || { echo "server did not start"; cat "$work/server.log"; exit 1; }
        sleep 0.01
done
end=$(date +%s%N)
# utime + stime in clock ticks (fields 14, 15 of /proc/PID/stat; the name field has no spaces)
cpu_ms() { awk -v t="$(getconf CLK_TCK)" '{printf "%d", ($14 + $15) * 1000 / t}' /proc/$pid/stat; }
echo "load time (start to first answer): $(( (end - start) / 1000000 )) ms wall, $(cpu_ms) ms CPU"
echo "RSS after load: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$pid/status)"
total=$(curl -s "$base/models?pageSize=1&source=bench" | python3 -c 'import json,sys; print(json.load(sys.stdin)["size"])')
[ "$total" = 1 ] || { echo "unexpected answer"; exit 1; }
get=$base/sources/bench/models/acme/model-04000-instruct
curl -sf "$get" >/dev/null || { echo "model-04000 not found"; exit 1; }

run() {
        label=$1; path=$2
        out=$($client_pin wrk -t"$wrk_threads" -c64 -d"${dur_reload:-$dur}" --latency "http://127.0.0.1:$port$path")
        p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
        p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
        rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
        non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
        sockerr=$(echo "$out" | awk '/Socket errors/ {print}')
        printf '%-34s p50 %-9s p99 %-9s %s req/s%s\n' "$label" "$p50" "$p99" "$rps" \
                "${non2xx:+  NON-2XX: $non2xx}${sockerr:+  $sockerr}"
}
api=/api/model_catalog/v1alpha1
run "list + filterQuery (pageSize 10)" \
        "$api/models?filterQuery=license%3D%27mit%27%20AND%20artifacts.ttft_p90%20%3C%20100"
run "q search (pageSize 10)" "$api/models?q=translation"
run "get one model" "$api/sources/bench/models/acme/model-04000-instruct"
echo "RSS after load test: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$pid/status)"

# hot reload under load: replace the first catalog file (new inode, as a ConfigMap update does)
# every 2 s while wrk runs; the watcher reloads, and the swap must never answer a 5xx
if [ "$reloads" -gt 0 ]; then
        cp "$work/models.yaml" "$work/models.orig"
        (
                i=0
                while [ $i -lt "$reloads" ]; do
                        sleep 2
                        cp "$work/models.orig" "$work/models.new"
                        mv "$work/models.new" "$work/models.yaml"
                        i=$((i + 1))
                done
        ) &
        swapper=$!
        dur_reload=$((reloads * 2 + 3))s
        run "list + filterQuery, $reloads reloads" \
                "$api/models?filterQuery=license%3D%27mit%27%20AND%20artifacts.ttft_p90%20%3C%20100"
        wait $swapper
        sleep 2
        echo "RSS after $reloads reloads: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$pid/status)"
fi
echo "server CPU in total: $(cpu_ms) ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"
