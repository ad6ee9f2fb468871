# shellcheck shell=bash
# scripts/lib/steps.sh — the step runner of scripts/test (sourced; bash).
#
# Every check scripts/test runs is a step with a name. A step passes, fails or is skipped, and
# each counts once in the closing line; Meson test logs count each of their tests the same way.
# No step ends silently: a failed step prints its name, its exit status, its log's path and the
# log's last lines; a skipped step is listed with its reason just above the closing line.
#
#   steps_init LOGDIR             where step logs go (kept after the run)
#   steps_cpu_log                 samples the busy cores every 30 s into LOGDIR/cpu.log
#   step_run [--tee] NAME CMD [ARGS...]
#                                 runs CMD with stdout+stderr in LOGDIR/NAME.log (--tee: shown
#                                 too); exit 0 passes, 77 skips (reason: the last output line
#                                 that starts with "SKIP"), anything else fails
#   step_setup NAME CMD [ARGS...] the same for preparation (install, build, start a service):
#                                 counts only when it fails; returns CMD's status
#   step_skip NAME REASON         records a check that cannot run here, and why
#   step_fail NAME MESSAGE        records a failure found outside step_run
#   steps_add_meson BUILD         counts each test of BUILD/meson-logs/testlog.json
#   steps_finish                  prints the skipped and failed lists, what each failed Meson
#                                 test printed about its failure (its "not ok" subtests with
#                                 their assertion messages, or its last output lines), and
#                                 the time against STEPS_BUDGET (default 3600 s) and the load,
#                                 and "N passed, N failed, K skipped"; returns 1 when any failed
#
# STEPS_TAIL (default 40): how many log lines a failure prints.
STEPS_PASSED=0
STEPS_FAILED=()
STEPS_SKIPPED=()
STEPS_DETAILS=()
STEPS_LOGDIR=

steps_init() {
        STEPS_T0=$(date +%s)
        STEPS_LOGDIR=$1
        mkdir -p "$STEPS_LOGDIR"
        STEPS_PASSED=0
        STEPS_FAILED=()
        STEPS_SKIPPED=()
        STEPS_DETAILS=()
}

# steps_cpu_mark: the machine's busy and total CPU time now (jiffies of /proc/stat's "cpu" line);
# steps_cpu_since MARK: how many of the machine's cores were busy on average since MARK, as
# "CPU 1.4 of 2 cores" (what a step left idle is what running steps side by side could use).
steps_cpu_mark() {
        awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' \
                /proc/stat 2>/dev/null || echo "0 0"
}
steps_cpu_since() {
        local now
        now=$(steps_cpu_mark)
        awk -v a="$1" -v b="$now" -v n="$(nproc 2>/dev/null || echo 1)" 'BEGIN {
                split(a, x, " "); split(b, y, " ")
                if (y[2] > x[2]) printf "CPU %.1f of %d cores", (y[1] - x[1]) / (y[2] - x[2]) * n, n
                else printf "CPU ? of %d cores", n }'
}

# steps_cpu_log: from now until steps_finish, a line every 30 s in LOGDIR/cpu.log: the time, the
# cores busy over those 30 s and the load average (which phases leave the machine idle).
steps_cpu_log() {
        (
                trap 'exit 0' TERM
                m=$(steps_cpu_mark)
                while sleep 30; do
                        echo "$(date +%H:%M:%S) $(steps_cpu_since "$m") load $(cut -d' ' -f1 /proc/loadavg)"
                        m=$(steps_cpu_mark)
                done
        ) >"$STEPS_LOGDIR/cpu.log" 2>/dev/null </dev/null &
        STEPS_CPU_LOG_PID=$!
}

# Runs "$@" into the log of step $name; sets STEP_RC.
_step_exec() {
        local tee=$1 log=$2
        shift 2
        STEP_RC=0
        if [ "$tee" = 1 ]; then
                if "$@" </dev/null 2>&1 | tee "$log" >&2; then
                        STEP_RC=0
                else
                        STEP_RC=${PIPESTATUS[0]}
                fi
        else
                "$@" >"$log" 2>&1 </dev/null || STEP_RC=$?
        fi
}

_step_log() {
        printf '%s/%s.log' "$STEPS_LOGDIR" "$(printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_')"
}

step_setup() {
        local name=$1 log start cpu
        shift
        start=$(date +%s)
        cpu=$(steps_cpu_mark)
        log=$(_step_log "$name")
        echo "== $name (log $log)" >&2
        _step_exec 0 "$log" "$@"
        [ "$STEP_RC" = 0 ] && echo "ok: $name ($(($(date +%s) - start)) s, $(steps_cpu_since "$cpu"))" >&2
        if [ "$STEP_RC" != 0 ]; then
                STEPS_FAILED+=("$name (exit $STEP_RC, log $log)")
                echo "FAILED: $name (exit $STEP_RC, log $log); last lines:" >&2
                tail -n "${STEPS_TAIL:-40}" "$log" | sed 's/^/  | /' >&2
        fi
        return "$STEP_RC"
}

step_run() {
        local tee=0 name log start reason cpu
        [ "$1" = --tee ] && { tee=1; shift; }
        name=$1
        shift
        log=$(_step_log "$name")
        start=$(date +%s)
        cpu=$(steps_cpu_mark)
        echo "== $name (log $log)" >&2
        _step_exec "$tee" "$log" "$@"
        case $STEP_RC in
        0)
                STEPS_PASSED=$((STEPS_PASSED + 1))
                echo "ok: $name ($(($(date +%s) - start)) s, $(steps_cpu_since "$cpu"))" >&2
                ;;
        77)
                reason=$(grep -E '^SKIP' "$log" | tail -n 1 | sed -E 's/^SKIP:? *//')
                STEPS_SKIPPED+=("$name: ${reason:-exit status 77, no reason printed}")
                echo "skipped: $name: ${reason:-no reason printed}" >&2
                ;;
        *)
                STEPS_FAILED+=("$name (exit $STEP_RC, log $log)")
                echo "FAILED: $name (exit $STEP_RC, log $log); last lines:" >&2
                tail -n "${STEPS_TAIL:-40}" "$log" | sed 's/^/  | /' >&2
                ;;
        esac
        return 0
}

step_skip() {
        STEPS_SKIPPED+=("$1: $2")
        echo "skipped: $1: $2" >&2
}

step_fail() {
        STEPS_FAILED+=("$1 ($2)")
        echo "FAILED: $1: $2" >&2
}

# Each Meson test counts under "BUILD/NAME"; a skip's reason is its last "SKIP" output line.
steps_add_meson() {
        local build=$1 out
        if [ ! -f "$build/meson-logs/testlog.json" ]; then
                step_fail "meson test ($build)" "no $build/meson-logs/testlog.json"
                return 0
        fi
        out=$(python3 - "$build" <<'PY'
import json, sys
b = sys.argv[1]
with open(f"{b}/meson-logs/testlog.json") as f:
    for line in f:
        t = json.loads(line)
        r, name = t.get("result"), f"{b}/{t.get('name', '?').split(' / ')[-1]}"
        if r in ("OK", "EXPECTEDFAIL"):
            print("P")
        elif r == "SKIP":
            why = [l for l in (t.get("stdout") or "").splitlines() if l.lstrip().upper().startswith(("SKIP", "# SKIP", "OK 1 # SKIP"))]
            reason = why[-1].strip() if why else "skipped (exit 77)"
            print(f"S{name}: {reason}")
        else:
            print(f"F{name} ({r}, log {b}/meson-logs/testlog.txt)")
            # what the test said about it, bounded: CI shows only the end of the output
            out = (t.get("stdout") or "").splitlines()
            err = (t.get("stderr") or "").splitlines()
            picked, keep = [], 0
            for l in out:
                if l.startswith("not ok"):
                    keep = 8
                if keep > 0:
                    picked.append(l)
                    keep -= 1
            if not picked:
                picked = (out + err)[-15:]
            for l in picked[:40]:
                print(f"D{name}: {l[:300]}")
PY
) || { step_fail "meson test ($build)" "cannot read $build/meson-logs/testlog.json"; return 0; }
        while IFS= read -r l; do
                case $l in
                P) STEPS_PASSED=$((STEPS_PASSED + 1)) ;;
                S*) STEPS_SKIPPED+=("${l#S}") ;;
                F*) STEPS_FAILED+=("${l#F}") ;;
                D*) STEPS_DETAILS+=("${l#D}") ;;
                esac
        done <<<"$out"
        return 0
}

steps_finish() {
        local s
        [ -n "${STEPS_CPU_LOG_PID:-}" ] && kill "$STEPS_CPU_LOG_PID" 2>/dev/null && STEPS_CPU_LOG_PID=
        for s in "${STEPS_SKIPPED[@]}"; do echo "skipped: $s"; done
        for s in "${STEPS_DETAILS[@]}"; do echo "  $s"; done
        for s in "${STEPS_FAILED[@]}"; do echo "failed: $s"; done
        echo "time: $(($(date +%s) - STEPS_T0)) s of the ${STEPS_BUDGET:-3600} s budget" \
                "(load average $(cut -d' ' -f1-3 /proc/loadavg))"
        echo "$STEPS_PASSED passed, ${#STEPS_FAILED[@]} failed, ${#STEPS_SKIPPED[@]} skipped"
        [ "${#STEPS_FAILED[@]}" = 0 ]
}
