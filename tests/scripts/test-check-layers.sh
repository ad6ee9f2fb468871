#!/usr/bin/env bash
# Tests tools/check-layers: the fixture tree (tests/fixtures/layers) passes, and each kind of
# violation added to a copy of it fails with a line naming it; the real tree passes, and fails
# once a forbidden include is added to a copy of it.
set -euo pipefail
src=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
check=$src/tools/check-layers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect_fail NAME PATTERN SETUP...: copies the fixture, runs SETUP in it, expects exit 1 and
# a line matching PATTERN.
expect_fail() {
        local name=$1 pattern=$2 out rc=0
        shift 2
        rm -rf "$tmp/t" && cp -r "$src/tests/fixtures/layers" "$tmp/t"
        (cd "$tmp/t" && "$@")
        out=$("$check" --root "$tmp/t" 2>&1) || rc=$?
        if [ "$rc" != 1 ] || ! grep -qE -- "$pattern" <<<"$out"; then
                echo "not ok - $name: expected exit 1 and /$pattern/, got exit $rc:"
                sed 's/^/    /' <<<"$out"
                fails=$((fails + 1))
        else
                echo "ok - $name"
        fi
}
add() { printf '%s\n' "$2" >>"$1"; }

if out=$("$check" --root "$src/tests/fixtures/layers" 2>&1); then
        echo "ok - the fixture tree passes"
else
        echo "not ok - the fixture tree fails:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
fi
expect_fail "upward include" 'src/util/a.h:[0-9]+: util may not include "core/c.h"' \
        add src/util/a.h '#include "core/c.h"'
expect_fail "sideways include into a pure core's user" 'core may not include "io/' \
        sh -c 'printf "#pragma once\n" >src/io/e.h && printf "#include \"io/e.h\"\n" >>src/core/c.c'
expect_fail "I/O header in a pure core" 'pure core core includes <curl/curl.h>' \
        add src/core/c.c '#include <curl/curl.h>'
expect_fail "logging in a pure core" 'pure core core includes "util/log.h"' \
        add src/core/c.c '#include "util/log.h"'
expect_fail "a library the row does not list" 'util may not include <jansson.h>' \
        add src/util/a.h '#include <jansson.h>'
expect_fail "include cycle" 'include cycle: src/core/c.h -> src/core/f.h -> src/core/c.h' \
        sh -c 'printf "#include \"core/c.h\"\n" >src/core/f.h && printf "#include \"core/f.h\"\n" >>src/core/c.h'
expect_fail "layer cycle" 'layer cycle' \
        sh -c 'sed -i "s/^unit util  src\/util\/\*  :/unit util src\/util\/* : io/" tools/layers.conf &&
               printf "#include \"io/g.h\"\n" >>src/util/a.h && printf "#pragma once\n#include \"util/a.h\"\n" >src/io/g.h'
expect_fail "a folder no unit covers" 'src/extra/x.c: no unit' \
        sh -c 'mkdir src/extra && printf "int x;\n" >src/extra/x.c'
expect_fail "a folder missing from ARCHITECTURE.md" 'src/extra: not a row of the layer table' \
        sh -c 'mkdir src/extra && printf "int x;\n" >src/extra/x.c && printf "unit extra src/extra/* :\n" >>tools/layers.conf'
expect_fail "an include of no file" '"util/nope.h" is not a file of src/' \
        add src/io/d.c '#include "util/nope.h"'

# the real tree
if out=$("$check" --root "$src" 2>&1); then
        echo "ok - the real tree passes"
else
        echo "not ok - the real tree fails:"; sed 's/^/    /' <<<"$out"; fails=$((fails + 1))
fi
mkdir -p "$tmp/real"
cp -r "$src/src" "$src/docs" "$src/tools" "$tmp/real/"
printf '#include "kube/client.h"\n' >>"$tmp/real/src/serving/plan.c"
rc=0
out=$("$check" --root "$tmp/real" 2>&1) || rc=$?
if [ "$rc" = 1 ] && grep -q 'src/serving/plan.c:.*serving-core may not include "kube/client.h"' <<<"$out"; then
        echo "ok - a forbidden include added to the real tree fails"
else
        echo "not ok - a forbidden include added to the real tree: exit $rc"; sed 's/^/    /' <<<"$out"
        fails=$((fails + 1))
fi

[ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
