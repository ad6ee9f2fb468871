#!/usr/bin/env bash
# run-torture.sh BINARY [MAX [STRIDE [LIMIT]]] — allocation fault torture of one Criterion unit
# test binary of a -Dalloc_fault=true build (tests/alloc-fault/alloc-fault.c). Test by test
# (Criterion --filter): for N = 1, 2, ... the test's process fails its Nth allocation, until the
# test no longer reaches N (every allocation of it has been failed once) or N = MAX (default
# $MODELPLANE_ALLOC_TORTURE_MAX, else 400). A test's allocations do not depend on the other
# tests (each runs in its own process and counts from its start), so this covers what running
# the whole binary for each N covers, with one process per (test, N) instead of one per test per
# N up to the largest test's count: on a loaded machine the cost is the processes started.
#
# With STRIDE (default $MODELPLANE_ALLOC_TORTURE_STRIDE, else 0: none), a test that reaches MAX is
# then sampled at every STRIDE-th N after MAX until it no longer reaches N or N > LIMIT (default
# 20 * MAX): a cheaper, partial run for a loaded machine, and reported as sampled.
#
# The binary runs with Criterion's default output, not --tap: in TAP mode Criterion drops the
# stderr of the test's process, and with it the sanitizer reports.
#
# A test that then fails its assertions is expected (it saw -ENOMEM). What fails the torture:
#   - a crash, an AddressSanitizer or UndefinedBehaviorSanitizer report, an unexpected signal;
#   - a hang (a run over 120 s);
#   - a LeakSanitizer report in a run where the test passed (the error path leaked; leaks
#     after a failed assertion are the test's own, Criterion leaves its cleanups unrun).
set -uo pipefail
bin=$1
max=${2:-${MODELPLANE_ALLOC_TORTURE_MAX:-400}}
stride=${3:-${MODELPLANE_ALLOC_TORTURE_STRIDE:-0}}
limit=${4:-$((20 * max))}
name=$(basename "$bin")
tmp=$(mktemp)
faults=$(mktemp)
trap 'rm -f "$tmp" "$faults"' EXIT
failed_runs=0
problems=0
runs=0
deepest=0
partial=0
fixture_aborts=0

# "suite/test" for each test of the binary (Criterion --list: "suite: n tests", then "├── test").
mapfile -t tests < <("$bin" --list 2>/dev/null | awk '
        /^[^ │├└]/ { suite = $1; sub(/:$/, "", suite); next }
        { t = $NF; if (t != "") print suite "/" t }')
[ "${#tests[@]}" -gt 0 ] || { echo "$name: no tests listed by $bin --list"; exit 1; }

# fixture_failed OUTPUT: the run's crash is Criterion's abort after a failed assertion in the
# suite's .init fixture (the setup saw -ENOMEM): Criterion says the test "crashed during its setup
# or teardown" and names a failed assertion, and no sanitizer spoke (a real crash in a fixture
# under ASan is an ASan report: our code calls no abort()).
fixture_failed() {
        grep -q 'crashed during its setup or teardown' "$1" &&
                grep -qE '^\[----\] .*: Assertion Failed' "$1" &&
                ! grep -qE 'ERROR: AddressSanitizer|runtime error:' "$1"
}

# torture_one TEST: N = 1.. for one test; sets reached (the last N the test reached).
torture_one() {
        local t=$1 n rc
        reached=0
        for ((n = 1; n <= max || (stride > 0 && n <= limit); n += (n < max || stride == 0) ? 1 : stride)); do
                rc=0
                : >"$faults"
                MODELPLANE_ALLOC_FAIL_AT=$n MODELPLANE_ALLOC_FAULT_LOG=$faults timeout 120 \
                        "$bin" --jobs=1 --filter="$t" >"$tmp" 2>&1 || rc=$?
                runs=$((runs + 1))
                if ! [ -s "$faults" ]; then
                        [ "$rc" = 0 ] && { echo "$name: $t: $(covered)"; return 0; }
                        echo "$name: $t: N=$n: no allocation failed, yet exit $rc:"
                        tail -n 30 "$tmp"
                        problems=$((problems + 1))
                        return 0
                fi
                reached=$n
                if [ "$rc" = 124 ]; then
                        echo "$name: $t: N=$n: hang (over 120 s)"; tail -n 30 "$tmp"
                        problems=$((problems + 1))
                elif fixture_failed "$tmp"; then
                        fixture_aborts=$((fixture_aborts + 1))
                elif grep -qE 'ERROR: AddressSanitizer|runtime error:|Unexpected signal|CRASH|crashed' "$tmp"; then
                        echo "$name: $t: N=$n: crash or sanitizer report:"
                        grep -E -B2 -A25 'ERROR: AddressSanitizer|runtime error:|Unexpected signal|CRASH|crashed' "$tmp" | head -n 60
                        problems=$((problems + 1))
                elif [ "$rc" = 0 ] && grep -q 'ERROR: LeakSanitizer' "$tmp"; then
                        echo "$name: $t: N=$n: leak on an error path that the test tolerated:"
                        grep -A30 'ERROR: LeakSanitizer' "$tmp" | head -n 40
                        problems=$((problems + 1))
                fi
                [ "$rc" = 0 ] || failed_runs=$((failed_runs + 1))
                [ "$problems" -ge 5 ] && return 0
        done
        echo "$name: $t: $(covered), and the test allocates more"
}

# What torture_one covered of the current test (its n and reached).
covered() {
        if [ "$n" -le "$max" ]; then
                echo "N = 1..$reached (every allocation)"
        elif [ "$stride" = 0 ]; then
                echo "N = 1..$max"
        else
                echo "N = 1..$max, then every ${stride}th N after it up to $reached (sampled)"
        fi
}

for t in "${tests[@]}"; do
        torture_one "$t"
        [ "$reached" -gt "$deepest" ] && deepest=$reached
        [ "$reached" -ge "$max" ] && partial=$((partial + 1))
        [ "$problems" -ge 5 ] && break
done
if [ "$problems" -gt 0 ]; then
        echo "$name: $problems problem(s)"
        exit 1
fi
if [ "$deepest" = 0 ]; then
        echo "$name: ${#tests[@]} tests, none allocates (nothing to fail)"
elif [ "$partial" -gt 0 ]; then
        echo "$name: ${#tests[@]} tests, N = 1..$max covered$([ "$stride" -gt 0 ] && echo ", sampled every ${stride}th to $limit") ($partial tests reach MAX, the deepest N = $deepest), $runs runs, $failed_runs with failed assertions ($fixture_aborts in a fixture), no crash, no leak on a passing run"
else
        echo "$name: ${#tests[@]} tests, every allocation failed once (N = 1..$deepest), $runs runs, $failed_runs with failed assertions ($fixture_aborts in a fixture), no crash, no leak on a passing run"
fi
