#!/usr/bin/env bash
# Tests tools/check-banned: a tree with only comments, strings and look-alike names passes; each
# banned call fails with a line naming the file, the line and the replacement; the real tree
# passes.
set -euo pipefail
src=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
check=$src/tools/check-banned
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fresh() {
        rm -rf "$tmp/t"
        mkdir -p "$tmp/t/src/util" "$tmp/t/src/x" "$tmp/t/tests"
        cp "$src/src/util/banned.h" "$tmp/t/src/util/"
        cat >"$tmp/t/src/x/ok.c" <<'C'
/* strcpy(a, b) in a comment, sprintf( too */
// gets(buf) in a line comment
static const char *s = "atoi(x) strtok(a, b) \" system(cmd)";
static char c = '(';
int my_strcpy(char *a);
int safe_atoi32(const char *s, int *ret);
struct t { int (*atoi)(const char *); };
static int f(struct t *p) { return p->atoi("1") + safe_atoi32("1", 0) + snprintf(0, 0, "x"); }
C
        printf 'static void t(void) { (void)!system("true"); }\n' >"$tmp/t/tests/uses-system.c"
}
expect_fail() {
        local name=$1 pattern=$2 file=$3 line=$4 out rc=0
        fresh
        printf '%s\n' "$line" >>"$tmp/t/$file"
        out=$("$check" --root "$tmp/t" 2>&1) || rc=$?
        if [ "$rc" != 1 ] || ! grep -qE -- "$pattern" <<<"$out"; then
                echo "not ok - $name: expected exit 1 and /$pattern/, got exit $rc:"
                sed 's/^/    /' <<<"$out"
                fails=$((fails + 1))
        else
                echo "ok - $name"
        fi
}

fresh
if out=$("$check" --root "$tmp/t" 2>&1); then
        echo "ok - comments, strings, members and look-alikes pass; tests may call system()"
else
        echo "not ok - the clean fixture fails:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
fi
expect_fail strcpy 'src/x/ok.c:9: strcpy\(\) is banned: use snprintf' src/x/ok.c \
        'static void g(char *d) { strcpy(d, "x"); }'
expect_fail sprintf 'sprintf\(\) is banned' src/x/ok.c 'static void g(char *d) { sprintf (d, "x"); }'
expect_fail atoi 'atoi\(\) is banned: use safe_atoi32' src/x/ok.c 'static int g(void) { return atoi("1"); }'
expect_fail "strtok in tests" 'tests/uses-system.c:2: strtok\(\) is banned' tests/uses-system.c \
        'static void g(char *d) { (void)strtok(d, ","); }'
expect_fail "system in src" 'system\(\) is banned: use posix_spawn' src/x/ok.c \
        'static void g(void) { (void)!system("ls"); }'
expect_fail "#undef" '#undef gets defeats util/banned.h' src/x/ok.c '#undef gets'
fresh
sed -i '/define strerror/d' "$tmp/t/src/util/banned.h"
rc=0; out=$("$check" --root "$tmp/t" 2>&1) || rc=$?
if [ "$rc" = 1 ] && grep -q 'strerror is banned by the house style' <<<"$out"; then
        echo "ok - a banned.h without strerror fails"
else
        echo "not ok - a banned.h without strerror: exit $rc"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
fi

if out=$("$check" --root "$src" 2>&1); then
        echo "ok - the real tree passes"
else
        echo "not ok - the real tree:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
fi
[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
