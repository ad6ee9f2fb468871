#!/usr/bin/env bash
# Tests tools/check-banned: a tree with only comments, strings and look-alike names passes; each
# banned call fails with a line naming the file, the line and the replacement; the real tree
# passes.
set -euo pipefail
. "$(dirname "$0")/checker-lib.sh"
check=$src/tools/check-banned

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
        local name=$1 pattern=$2 file=$3 line=$4
        fresh
        printf '%s\n' "$line" >>"$tmp/t/$file"
        expect_rejects "$name" "$pattern" "$tmp/t"
}

fresh
expect_passes "comments, strings, members and look-alikes pass; tests may call system()" "$tmp/t"
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
expect_rejects "a banned.h without strerror fails" 'strerror is banned by the house style' "$tmp/t"

expect_passes "the real tree passes" "$src"
finish
