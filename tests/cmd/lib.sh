# shellcheck shell=bash
# Helpers of the tests/cmd shell tests: start `modelplane SUBCOMMAND` on a free loopback port
# (port 0, read back from its "listening on HOST:PORT" line) and fail with a message.
MP=${MODELPLANE_BIN:?MODELPLANE_BIN is not set (run under meson test)}
T=$(mktemp -d "${TMPDIR:-/tmp}/modelplane-cmd-test.XXXXXX")
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
        rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# start NAME ARGS... — runs "$MP ARGS..." with stdout in $T/NAME.out and stderr in $T/NAME.err;
# sets PORT once it prints its listening line.
start() {
        local name=$1 i
        shift
        # the files exist before the first read: the background child opens its redirections
        # only when it is scheduled, and a read before that failed the test (sed: can't read)
        : >"$T/$name.out"
        : >"$T/$name.err"
        "$MP" "$@" >>"$T/$name.out" 2>>"$T/$name.err" &
        PIDS+=($!)
        for i in $(seq 600); do
                PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/$name.out")
                [ -n "$PORT" ] && return 0
                kill -0 "${PIDS[-1]}" 2>/dev/null || { cat "$T/$name.err" >&2; fail "$name exited"; }
                sleep 0.05
        done
        fail "$name did not start within 30 s"
}
