#!/usr/bin/env bash
# bench/convergence (issue #12) still parses and refuses bad settings, and tm-floor and its
# watcher tm-watch refuse bad arguments (fast, no services). With `smoke` as $1 and
# MODELPLANE_BENCH_SMOKE=1 it also runs `bench/convergence --smoke` (N=5 and 2x2: modelplane,
# the floor's search over two windows and the bare row, on fresh control planes; it fails when a
# scenario does not converge or a floor or bare figure is missing). Never asserts a time.
set -euo pipefail
SRC=${MODELPLANE_SOURCE_ROOT:?}
BLD=${MODELPLANE_BUILD_ROOT:?}
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "${1:-}" = smoke ]; then
        if [ "${MODELPLANE_BENCH_SMOKE:-}" != 1 ]; then
                echo "SKIP: set MODELPLANE_BENCH_SMOKE=1 to run bench/convergence --smoke (minutes: three fresh control planes)"
                exit 77
        fi
        out=$(MODELPLANE_BUILD_DIR=$BLD "$SRC/bench/convergence" --smoke 2>&1) || { echo "$out"; fail "bench/convergence --smoke"; }
        echo "$out"
        for s in "create N=5" "storageUri N=5" "delete N=5" "memory raise 2+2" "create 2x2" "delete 2x2"; do
                grep -q "^| $s " <<<"$out" || fail "no row for $s"
        done
        # the floor (fastest window), its window and the bare row: figures, not "-"
        for s in "create N=5" "delete N=5"; do
                grep "^| $s " <<<"$out" | awk -F'|' '{ exit !($5 ~ /[0-9]/ && $6 ~ /^ *(4|16) *$/ && $7 ~ /[0-9]/) }' ||
                        fail "no floor, floor window or bare time for $s"
        done
        grep -q "^  create N=5: 4 writes .*, 16 writes .* -> " <<<"$out" || fail "no concurrency search line"
        exit 0
fi

bash -n "$SRC/bench/convergence" || fail "bash -n bench/convergence"
# the bench refuses settings it cannot honour, before it starts anything
for bad in "BENCH_FLOOR_WINDOWS=0" "BENCH_FLOOR_WINDOWS=65" "BENCH_FLOOR_WINDOWS=x" \
           "BENCH_FLOOR_DESIGN=maybe" "BENCH_CONTROLLERS=floor2"; do
        if env "$bad" MODELPLANE_TESTBIN=/nonexistent MODELPLANE_BUILD_DIR="$BLD" \
                "$SRC/bench/convergence" >/dev/null 2>"$BLD/convergence.err"; then
                fail "bench/convergence accepted $bad"
        fi
        grep -q "${bad%%=*}" "$BLD/convergence.err" || fail "bench/convergence did not name ${bad%%=*}: $(cat "$BLD/convergence.err")"
done
for args in "" "create" "create k ns isvc 0 8 p" "create k ns isvc 5 0 p" "floor k ns isvc 5 8 p" \
            "floor k ns isvc:3 5 8 p 4" "create k ns isvc:0 5 8 p" "bogus k ns isvc 5 8 p" \
            "delete k ns isvc 5 8 p 4" "delete-floor k ns isvc 5 8 p" "delete-floor k ns isvc 5 8 p 0" \
            "floor k ns isvc 5 8 p 4 maybe" "delete-floor k ns isvc 5 8 p 4 finalizer x" \
            "create k ns isvc 5 8 p finalizer"; do
        # shellcheck disable=SC2086 # word splitting is the point
        if "$BLD/bench/tm-floor" $args >/dev/null 2>"$BLD/tm-floor.err"; then
                fail "tm-floor accepted '$args'"
        fi
        grep -q usage "$BLD/tm-floor.err" || fail "tm-floor '$args' printed no usage"
done
"$BLD/bench/tm-floor" floor k ns isvc 5 8 p 4 maybe >/dev/null 2>"$BLD/tm-floor.err" || true
grep -q "DESIGN is no-finalizer or finalizer, not 'maybe'" "$BLD/tm-floor.err" || fail "tm-floor did not name the bad DESIGN"
# a kubeconfig that does not exist is named
if "$BLD/bench/tm-floor" create /nonexistent/kubeconfig ns isvc 5 8 p 2>"$BLD/tm-floor.err"; then
        fail "tm-floor ran without a kubeconfig"
fi
grep -q kubeconfig "$BLD/tm-floor.err" || fail "tm-floor did not name the kubeconfig"
# the watcher (bench/tm-watch) refuses bad arguments with a reason and its usage (exit 2)
for args in "" "k ns" "k ns ready" "k ns ready --ready" "k ns ready --ready x" "k ns ready --ready -1" \
            "k ns ready --bogus 1" "k ns ready --timeout 0 --tms 1" "k ns ready --uri-contains" \
            "k ns ready --uri-contains ''" "k ns ready --timeout 5"; do
        set +e
        eval "\"\$BLD/bench/tm-watch\" $args" >/dev/null 2>"$BLD/tm-watch.err"
        rc=$?
        set -e
        [ "$rc" = 2 ] || fail "tm-watch '$args' exited $rc, not 2"
        grep -q usage "$BLD/tm-watch.err" || fail "tm-watch '$args' printed no usage"
        grep -q "^tm-watch: " "$BLD/tm-watch.err" || fail "tm-watch '$args' gave no reason"
done
# good arguments and a kubeconfig that does not exist: named, exit 1
rc=0
"$BLD/bench/tm-watch" /nonexistent/kubeconfig ns "$BLD/tm-watch.ready" --tms 0 --listed 0 \
        --timeout 5 >/dev/null 2>"$BLD/tm-watch.err" || rc=$?
[ "$rc" = 1 ] || fail "tm-watch without a kubeconfig exited $rc, not 1"
grep -q kubeconfig "$BLD/tm-watch.err" || fail "tm-watch did not name the kubeconfig"
[ ! -e "$BLD/tm-watch.ready" ] || fail "tm-watch touched its ready file without a watch"
echo "ok"
