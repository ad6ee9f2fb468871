#!/usr/bin/env bash
# check-runner.sh RUNNER BINARY — the torture runner finds what it must in
# test-alloc-torture-self (its top comment): the overflow and the leak at N = 3, nothing in
# clean, and no crash for the fixture's failed assertion at N = 1.
set -uo pipefail
out=$("$1" "$2" 2>&1)
rc=$?
fail() {
        echo "check-runner: $1"
        echo "$out" | grep -vE '^(ok|not ok|TAP|1\.\.|#)' | head -n 40
        exit 1
}
[ "$rc" = 1 ] || fail "exit $rc, expected 1"
grep -q 'self/overflow_on_oom: N=3: crash or sanitizer report' <<<"$out" || fail "overflow not found"
grep -qE 'heap-buffer-overflow|runtime error:' <<<"$out" || fail "no sanitizer report in the output"
grep -q 'self/leak_on_oom: N=3: leak on an error path' <<<"$out" || fail "leak not found"
grep -q 'self/clean: N = 1..3 (every allocation)' <<<"$out" || fail "clean not clean"
grep -q ': 2 problem(s)' <<<"$out" || fail "not exactly 2 problems"
echo "check-runner: ok (overflow and leak found, fixture abort not counted)"
