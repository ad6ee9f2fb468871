#!/usr/bin/env bash
# run-torture.sh BINARY [MAX] — allocation fault torture of one Criterion unit test binary of a
# -Dalloc_fault=true build (tests/alloc-fault/alloc-fault.c): for N = 1, 2, ... each test process
# fails its Nth allocation, until no test reaches N (every allocation of every test has been
# failed once) or N = MAX (default $MODELPLANE_ALLOC_TORTURE_MAX, else 400).
#
# A test that then fails its assertions is expected (it saw -ENOMEM). What fails the torture:
#   - a crash, an AddressSanitizer or UndefinedBehaviorSanitizer report, an unexpected signal;
#   - a hang (a run over 120 s);
#   - a LeakSanitizer report in a run where every test passed (the error path leaked; leaks
#     after a failed assertion are the test's own, Criterion leaves its cleanups unrun).
set -uo pipefail
bin=$1
max=${2:-${MODELPLANE_ALLOC_TORTURE_MAX:-400}}
name=$(basename "$bin")
tmp=$(mktemp)
faults=$(mktemp)
trap 'rm -f "$tmp" "$faults"' EXIT
failed_runs=0
problems=0

for ((n = 1; n <= max; n++)); do
        rc=0
        : >"$faults"
        MODELPLANE_ALLOC_FAIL_AT=$n MODELPLANE_ALLOC_FAULT_LOG=$faults timeout 120 "$bin" --jobs=1 --tap >"$tmp" 2>&1 || rc=$?
        if ! [ -s "$faults" ]; then
                [ "$rc" = 0 ] || { echo "$name: N=$n: no allocation failed, yet exit $rc:"; tail -n 30 "$tmp"; exit 1; }
                echo "$name: every allocation failed once (N = 1..$((n - 1))), $failed_runs runs with failed assertions, no crash, no leak on a passing run"
                exit 0
        fi
        if [ "$rc" = 124 ]; then
                echo "$name: N=$n: hang (over 120 s)"; tail -n 30 "$tmp"; problems=$((problems + 1))
        elif grep -qE 'ERROR: AddressSanitizer|runtime error:|unexpected signal|CRASH|crashed' "$tmp"; then
                echo "$name: N=$n: crash or sanitizer report:"
                grep -E -B2 -A25 'ERROR: AddressSanitizer|runtime error:|unexpected signal|CRASH|crashed' "$tmp" | head -n 60
                problems=$((problems + 1))
        elif [ "$rc" = 0 ] && grep -q 'ERROR: LeakSanitizer' "$tmp"; then
                echo "$name: N=$n: leak on an error path that the tests tolerated:"
                grep -A30 'ERROR: LeakSanitizer' "$tmp" | head -n 40
                problems=$((problems + 1))
        fi
        [ "$rc" = 0 ] || failed_runs=$((failed_runs + 1))
        [ "$problems" -ge 5 ] && break
done
if [ "$problems" -gt 0 ]; then
        echo "$name: $problems problem(s)"
        exit 1
fi
echo "$name: N = 1..$max covered (MAX reached; some tests allocate more), $failed_runs runs with failed assertions, no crash, no leak on a passing run"
