#!/usr/bin/env bash
# bench/convergence (issue #12) still parses, its watcher compiles, and tm-floor refuses bad
# arguments (fast, no services). With `smoke` as $1 and MODELPLANE_BENCH_SMOKE=1 it also runs
# `bench/convergence --smoke` (N=5 and 2x2, modelplane and the floor on fresh control planes; it
# fails when a scenario does not converge). Never asserts a time.
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
        exit 0
fi

bash -n "$SRC/bench/convergence" || fail "bash -n bench/convergence"
python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$SRC/bench/convergence-watch.py" ||
        fail "bench/convergence-watch.py does not parse"
python3 "$SRC/bench/convergence-watch.py" --help >/dev/null || fail "convergence-watch.py --help"
for args in "" "create" "create k ns isvc 0 8 p" "create k ns isvc 5 0 p" "floor k ns isvc 5 8 p" \
            "floor k ns isvc:3 5 8 p 4" "create k ns isvc:0 5 8 p" "bogus k ns isvc 5 8 p" \
            "delete k ns isvc 5 8 p 4" "delete-floor k ns isvc 5 8 p" "delete-floor k ns isvc 5 8 p 0"; do
        # shellcheck disable=SC2086 # word splitting is the point
        if "$BLD/bench/tm-floor" $args >/dev/null 2>"$BLD/tm-floor.err"; then
                fail "tm-floor accepted '$args'"
        fi
        grep -q usage "$BLD/tm-floor.err" || fail "tm-floor '$args' printed no usage"
done
# a kubeconfig that does not exist is named
if "$BLD/bench/tm-floor" create /nonexistent/kubeconfig ns isvc 5 8 p 2>"$BLD/tm-floor.err"; then
        fail "tm-floor ran without a kubeconfig"
fi
grep -q kubeconfig "$BLD/tm-floor.err" || fail "tm-floor did not name the kubeconfig"
echo "ok"
