#!/usr/bin/env bash
# Tests tools/run-clang-tidy's filter and baseline on a replayed clang-tidy output
# (MODELPLANE_TIDY_REPLAY), in a scratch tree: a leak report on a variable declared with a
# cleanup attribute in the same function is dropped (also when the declaration goes on below the
# attribute); a leak of a plain pointer, a double free, and a leak of a name that is a cleanup
# variable only in another function are kept; one finding printed under two paths counts once;
# the baseline passes what it lists and fails what it does not.
set -euo pipefail
src=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
mkdir -p "$tmp/t/tools" "$tmp/t/src"
cp "$src/tools/run-clang-tidy" "$tmp/t/tools/"
cat >"$tmp/t/src/x.c" <<'C'
/* line 1 */
static void f(void)
{
        AUTOFREE char *a = strdup("x");
        CLEANUP(thing_release)
        struct thing t = { .name = strdup("y") };
        char *plain = strdup("z");
        use(a, &t, plain);
}

static void g(void)
{
        char *a = strdup("x");
        use(a);
}
C
leak() { printf "%s:%s:9: error: Potential leak of memory pointed to by '%s' [clang-analyzer-unix.Malloc,-warnings-as-errors]\n" "$1" "$2" "$3"; }
{
        leak ../src/x.c 8 a           # AUTOFREE in f: dropped
        leak ../src/x.c 8 t.name      # CLEANUP() on the line above the declaration: dropped
        leak ../src/x.c 8 plain       # a plain pointer: kept
        leak /abs/build/../src/x.c 8 plain # the same finding under another path: once
        leak ../src/x.c 14 a          # 'a' is a cleanup variable only in f: kept
        echo "../src/x.c:8:9: error: Attempt to free released memory [clang-analyzer-unix.Malloc,-warnings-as-errors]"
        echo "../src/x.c:8:9: note: Memory is released"
} >"$tmp/replay"

# run NAME WANT_RC PATTERN BASELINE: the script's exit status and a line of its output
run() {
        local name=$1 want=$2 pattern=$3 baseline=$4 out rc=0
        out=$(MODELPLANE_TIDY_REPLAY="$tmp/replay" MODELPLANE_TIDY_BASELINE="$baseline" \
                "$tmp/t/tools/run-clang-tidy" build src/x.c 2>&1) || rc=$?
        if [ "$rc" != "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
                echo "not ok - $name: expected exit $want and /$pattern/, got exit $rc:"
                sed 's/^/    /' <<<"$out"
                fails=$((fails + 1))
        else
                echo "ok - $name"
        fi
}

printf '# known\n3 src/x.c clang-analyzer-unix.Malloc\n' >"$tmp/baseline"
run "cleanup-attribute leaks are dropped, the rest counted once" 0 \
        '3 finding\(s\) in 1 files \(2 leak/dead-store report\(s\) on cleanup-attribute variables dropped\)' \
        "$tmp/baseline"
run "the kept findings are printed" 0 "src/x.c:14:9: error: Potential leak of memory pointed to by 'a'" \
        "$tmp/baseline"
run "a listed count passes" 0 'no new finding \(3 known' "$tmp/baseline"
run "an empty baseline fails, naming file, check and counts" 1 \
        'new: src/x.c clang-analyzer-unix.Malloc \(3, baseline 0\)' /dev/null
printf '2 src/x.c clang-analyzer-unix.Malloc\n' >"$tmp/baseline2"
run "one over the listed count fails" 1 'new: src/x.c clang-analyzer-unix.Malloc \(3, baseline 2\)' \
        "$tmp/baseline2"
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
