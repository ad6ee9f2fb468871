#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command line across subcommands (src/cmd/cli.h): for every subcommand, a bad flag, a bad
# value of a common flag and a stray argument give exit status 2 and the one error format
#   modelplane SUB: MESSAGE
#   Try 'modelplane SUB --help'.
# and --help (exit 0) lists -h and the common log flags. Old flag names keep working.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SUBCOMMANDS=(controller webhook registry catalog agent async-upload)
# async-upload writes upstream's termination message (default /dev/termination-log)
export TERMINATION_MESSAGE_PATH=$T/termination-log

# expect_usage_error SUB MESSAGE ARGS... — exit 2, first line "modelplane SUB: MESSAGE", the hint
expect_usage_error() {
        local sub=$1 msg=$2 rc=0
        shift 2
        "$MP" "$sub" "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
        [ "$rc" = 2 ] || fail "$sub $*: exit $rc, not 2: $(cat "$T/err")"
        [ "$(sed -n 1p "$T/err")" = "modelplane $sub: $msg" ] ||
                fail "$sub $*: first line '$(sed -n 1p "$T/err")', want 'modelplane $sub: $msg'"
        [ "$(sed -n 2p "$T/err")" = "Try 'modelplane $sub --help'." ] ||
                fail "$sub $*: no hint line: $(cat "$T/err")"
        [ "$(wc -l <"$T/err")" = 2 ] || fail "$sub $*: more than two lines: $(cat "$T/err")"
        [ ! -s "$T/out" ] || fail "$sub $*: wrote to stdout"
}

for sub in "${SUBCOMMANDS[@]}"; do
        expect_usage_error "$sub" "unknown option '--no-such-flag'" --no-such-flag
        expect_usage_error "$sub" "unknown option '--no-such-flag'" --no-such-flag=1
        expect_usage_error "$sub" "unknown option '-Z'" -Z
        expect_usage_error "$sub" "unexpected argument 'stray'" stray
        expect_usage_error "$sub" "option '--help' doesn't allow an argument" --help=yes
        expect_usage_error "$sub" "option '--zap-log-level' requires an argument" --zap-log-level
        expect_usage_error "$sub" "invalid --zap-log-level 'loud' (debug, info, warn or error)" \
                --zap-log-level loud
        expect_usage_error "$sub" "invalid --log-level 'loud' (debug, info, warn or error)" \
                --log-level=loud
        expect_usage_error "$sub" "invalid --log-format 'xml' (json or text)" --log-format xml

        for h in -h --help; do
                "$MP" "$sub" "$h" >"$T/help" 2>"$T/err" || fail "$sub $h: exit $?"
                [ ! -s "$T/err" ] || fail "$sub $h wrote to stderr"
                head -1 "$T/help" | grep -qx "Usage: modelplane $sub \[OPTIONS\]" ||
                        fail "$sub $h: no usage line"
                for f in '-h, --help' '--zap-log-level LEVEL' '--log-level LEVEL' \
                         '--log-format FORMAT'; do
                        grep -qF -- "$f" "$T/help" || fail "$sub --help does not list '$f'"
                done
        done
done

# bad values of each subcommand's own flags, in the same format
expect_usage_error async-upload \
        "--source-type: invalid choice 'ftp' (choose from 's3', 'oci', 'uri')" --source-type ftp
expect_usage_error async-upload \
        "--registry-is-secure: invalid boolean value 'maybe'" --registry-is-secure=maybe
grep -qx "Unexpected error: --registry-is-secure: invalid boolean value 'maybe'" \
        "$TERMINATION_MESSAGE_PATH" || fail "async-upload: termination message $(cat "$TERMINATION_MESSAGE_PATH")"
expect_usage_error controller "invalid --max-concurrent-reconciles '0' (1-256)" \
        --max-concurrent-reconciles 0
expect_usage_error controller "invalid --leader-elect value 'maybe' (true or false)" \
        --leader-elect=maybe
expect_usage_error controller "invalid --max-concurrent-writes '65' (1-64)" \
        --max-concurrent-writes 65
expect_usage_error controller "invalid --delete-batch-window '10001' (0-10000)" \
        --delete-batch-window 10001
expect_usage_error controller "invalid --trainedmodel-finalizer value 'sometimes' (true or false)" \
        --trainedmodel-finalizer=sometimes
# no client-side rate limit by default (controller-runtime >= 0.21), and the help says so
"$MP" controller --help >"$T/help" 2>&1 || fail "controller --help"
grep -qF -- "client-side rate limit, 0 = off (default 0" "$T/help" ||
        fail "controller --help does not say that --kube-api-qps 0 is off and the default"
# deletes without KServe's finalizer by default (docs/serving.md), and the help says so
grep -qF -- "(default false: the" "$T/help" ||
        fail "controller --help does not say that --trainedmodel-finalizer is off by default"
expect_usage_error webhook "invalid --webhook-port '70000' (0-65535)" --webhook-port 70000
expect_usage_error registry "--port: invalid value 'x': expected an integer from 0 to 65535" -p x
expect_usage_error registry "option '-d' requires an argument" -d
expect_usage_error catalog "invalid value for --listen: 'nocolon'" --listen nocolon
expect_usage_error catalog "invalid --poll-interval '0' (1-86400 seconds)" --poll-interval 0
expect_usage_error catalog "invalid --threads '0' (1-256)" --threads 0
expect_usage_error catalog "invalid --threads '257' (1-256)" --threads 257
expect_usage_error ui "'Bad_NS' is not a namespace name" --registry-namespace Bad_NS
expect_usage_error ui "--registry-name must be 1 to 63 bytes" --registry-name "$(printf 'x%.0s' {1..64})"

# every long flag the help lists is accepted by the parser (no flag listed but unknown):
# each as --FLAG= (an empty value, or a value a flag without one rejects) then --help, so that
# nothing starts
for sub in "${SUBCOMMANDS[@]}"; do
        "$MP" "$sub" --help >"$T/help"
        while read -r flag; do
                rc=0
                timeout 20 "$MP" "$sub" "$flag=" --help >/dev/null 2>"$T/err" </dev/null || rc=$?
                [ "$rc" != 124 ] || fail "$sub $flag= --help did not exit"
                if grep -q "unknown option '$flag'" "$T/err"; then
                        fail "$sub --help lists $flag but the parser does not know it"
                fi
        done < <(grep -oE -- '--[a-z][a-z0-9-]+' "$T/help" | sort -u)
done

# compatibility: the old spellings still parse (--help after them, so nothing starts)
"$MP" controller --zap-log-level debug -v --leader-elect --enable-webhook=false --help >/dev/null
"$MP" webhook --log-level debug --log-format text --help >/dev/null
"$MP" catalog -l 127.0.0.1:0 --log-level warn --help >/dev/null
"$MP" registry -n 127.0.0.1 -p 0 -d x.db --database x.db --zap-encoder console --help >/dev/null
# the console's secret files (util/file-util's reader): each refusal names the file and why
printf '' >"$T/s-empty"
printf 'a\0b' >"$T/s-nul"
head -c 4097 /dev/zero | tr '\0' x >"$T/s-big"
printf '\r\n\n' >"$T/s-newlines"
for c in "s-empty:Invalid argument" "s-nul:Invalid argument" "s-big:File too large" \
        "s-none:No such file or directory" "s-newlines:Invalid argument"; do
        f=${c%%:*}
        rc=0
        timeout 20 "$MP" ui --no-kube --listen 127.0.0.1:0 --proxy-secret-file "$T/$f" \
                >/dev/null 2>"$T/err" </dev/null || rc=$?
        [ "$rc" = 1 ] || fail "ui --proxy-secret-file $f: exit $rc, not 1"
        grep -qF -- "cannot read --proxy-secret-file $T/$f (1 to 4096 bytes)" "$T/err" ||
                fail "ui --proxy-secret-file $f: $(cat "$T/err")"
        grep -qF -- "${c#*:}" "$T/err" || fail "ui --proxy-secret-file $f: $(cat "$T/err")"
done
echo "ok: one command line for ${SUBCOMMANDS[*]}"
