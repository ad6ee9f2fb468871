#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The step runner of scripts/test (scripts/lib/steps.sh) with fake steps, no services: a failing
# step is counted as failed under its name, prints its exit status, log path and last lines, and
# makes the run fail; a skipped step and a skipped Meson test are listed with their reasons just
# above the closing line "N passed, N failed, K skipped"; a Meson test log counts each test; a
# run where everything passes succeeds. Then scripts/fuzz-smoke with a target that cannot be
# built: it must fail, naming the target and its log (no silent end under set -e).
set -euo pipefail
ROOT=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/modelplane-steps-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- a run with one failing step, in a subshell as scripts/test runs it
rc=0
(
        set -euo pipefail
        . "$ROOT/scripts/lib/steps.sh"
        steps_init "$T/logs"
        step_run passes true
        step_run fuzz-smoke sh -c 'echo compiling; echo "ld: cannot find libclang_rt.fuzzer-x86_64.a" >&2; exit 1'
        step_run schemathesis-catalog sh -c 'echo "SKIP: no OpenAPI document at ../shared"; exit 77'
        step_skip schemathesis-registry "the upstream OpenAPI document is not published as a module"
        step_setup "build build-x" true
        mkdir -p "$T/b/meson-logs"
        cat >"$T/b/meson-logs/testlog.json" <<'JSON'
{"name": "modelplane:unit / util-buf", "result": "OK", "stdout": ""}
{"name": "modelplane:unit / kserve-samples", "result": "SKIP", "stdout": "SKIP: MODELPLANE_KSERVE_DIR is not set\n"}
{"name": "modelplane:registry / registry-sqlite", "result": "ERROR", "stdout": "ok 1 - a\nnot ok 2 - informer::b\n  - test.c:12: |+\n      Assertion failed: x\n"}
{"name": "modelplane:registry / registry-pg", "result": "FAIL", "stdout": "", "stderr": "boom"}
{"name": "modelplane:catalog / catalog-http", "result": "TIMEOUT", "stdout": ""}
JSON
        steps_add_meson "$T/b"
        steps_add_meson "$T/missing"
        steps_finish
) >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "a run with failing steps exits $rc, not 1"
tail -n 1 "$T/out" | grep -qx '2 passed, 5 failed, 3 skipped' ||
        fail "closing line: $(tail -n 1 "$T/out")"
grep -qx "failed: fuzz-smoke (exit 1, log $T/logs/fuzz-smoke.log)" "$T/out" ||
        fail "the failed step is not listed by name with its log: $(cat "$T/out")"
grep -qx "failed: $T/b/registry-sqlite (ERROR, log $T/b/meson-logs/testlog.txt)" "$T/out" ||
        fail "a failed Meson test is not listed: $(cat "$T/out")"
# what a failed test said is shown above the lists: its "not ok" subtests, or its last lines
grep -qx "  $T/b/registry-sqlite: not ok 2 - informer::b" "$T/out" ||
        fail "a failed subtest is not shown: $(cat "$T/out")"
grep -qx "  $T/b/registry-sqlite:       Assertion failed: x" "$T/out" ||
        fail "a failed subtest's assertion is not shown: $(cat "$T/out")"
grep -q "registry-sqlite: ok 1 - a" "$T/out" && fail "a passing subtest is shown"
grep -qx "  $T/b/registry-pg: boom" "$T/out" || fail "a failed test's last lines are not shown"
grep -q "^failed: $T/b/catalog-http (TIMEOUT" "$T/out" || fail "a Meson timeout is not a failure"
grep -q "^failed: meson test ($T/missing) (no $T/missing/meson-logs/testlog.json)" "$T/out" ||
        fail "a build whose Meson run left no log is not a failure"
grep -qx "skipped: schemathesis-catalog: no OpenAPI document at ../shared" "$T/out" ||
        fail "a skipped step's reason is missing: $(cat "$T/out")"
grep -qx "skipped: schemathesis-registry: the upstream OpenAPI document is not published as a module" \
        "$T/out" || fail "step_skip is not listed"
grep -qx "skipped: $T/b/kserve-samples: SKIP: MODELPLANE_KSERVE_DIR is not set" "$T/out" ||
        fail "a skipped Meson test is not listed with its reason: $(cat "$T/out")"
# the skipped and failed lists come right before the time and the closing line
n=$(wc -l <"$T/out")
[ "$(grep -cE '^(skipped: |failed: |  )' "$T/out")" = $((n - 2)) ] || fail "stray lines in: $(cat "$T/out")"
tail -n 2 "$T/out" | head -n 1 | grep -q '^time: ' || fail "the time is not just before the closing line"
# no silent failure: the name, status, log and the log's last lines on stderr, as it happens
grep -q "FAILED: fuzz-smoke (exit 1, log $T/logs/fuzz-smoke.log); last lines:" "$T/err" ||
        fail "no failure message on stderr: $(cat "$T/err")"
grep -q '  | ld: cannot find libclang_rt.fuzzer-x86_64.a' "$T/err" || fail "the log's tail is not shown"
grep -q 'ld: cannot find' "$T/logs/fuzz-smoke.log" || fail "the step's output is not in its log"

# ---- a setup step that fails counts as failed and returns its status
rc=0
(
        . "$ROOT/scripts/lib/steps.sh"
        steps_init "$T/logs2"
        step_setup "setup build-rel" sh -c 'exit 3' && exit 10
        step_setup "build build-rel" true || exit 11
        steps_finish
) >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "a failed setup step: exit $rc"
tail -n 1 "$T/out" | grep -qx '0 passed, 1 failed, 0 skipped' || fail "setup: $(tail -n 1 "$T/out")"

# ---- everything passes: exit 0
(
        . "$ROOT/scripts/lib/steps.sh"
        steps_init "$T/logs3"
        step_run a true
        step_run --tee b echo visible
        steps_finish
) >"$T/out" 2>"$T/err" || fail "a passing run fails: $(cat "$T/out" "$T/err")"
[ "$(tail -n 1 "$T/out")" = "2 passed, 0 failed, 0 skipped" ] || fail "passing run: $(cat "$T/out")"
grep -qE '^time: [0-9]+ s of the 3600 s budget \(load average [0-9.]+ [0-9.]+ [0-9.]+\)$' "$T/out" ||
        fail "no time against the budget: $(cat "$T/out")"
grep -qx visible "$T/err" || fail "--tee does not show the output"

# ---- scripts/fuzz-smoke with a target that does not build: fails loudly
if command -v clang >/dev/null; then
        rc=0
        MODELPLANE_FUZZ_BUILD="$T/build-fuzz" MODELPLANE_FUZZ_TARGETS=no-such-target \
                "$ROOT/scripts/fuzz-smoke" 1 >"$T/out" 2>"$T/err" || rc=$?
        [ "$rc" != 0 ] || fail "fuzz-smoke with a broken target exits 0"
        grep -q "fuzz-smoke: building fuzz-no-such-target FAILED (log $T/build-fuzz/build-fuzz-no-such-target.log)" \
                "$T/err" || fail "fuzz-smoke did not name the failed build: $(cat "$T/err")"
else
        echo "clang missing: the fuzz-smoke part is not run"
fi
echo "ok: step runner"
