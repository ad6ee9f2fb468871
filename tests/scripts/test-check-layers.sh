#!/usr/bin/env bash
# Tests tools/check-layers: the fixture tree (tests/fixtures/layers) passes, and each kind of
# violation added to a copy of it fails with a line naming it; the real tree passes, and fails
# once a forbidden include is added to a copy of it.
set -euo pipefail
. "$(dirname "$0")/checker-lib.sh"
check=$src/tools/check-layers

# expect_fail NAME PATTERN SETUP...: copies the fixture, runs SETUP in it, expects exit 1 and
# a line matching PATTERN.
expect_fail() {
        local name=$1 pattern=$2
        shift 2
        rm -rf "$tmp/t" && cp -r "$src/tests/fixtures/layers" "$tmp/t"
        (cd "$tmp/t" && "$@")
        expect_rejects "$name" "$pattern" "$tmp/t"
}
add() { printf '%s\n' "$2" >>"$1"; }

expect_passes "the fixture tree passes" "$src/tests/fixtures/layers"
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
expect_passes "the real tree passes" "$src"
mkdir -p "$tmp/real"
cp -r "$src/src" "$src/docs" "$src/tools" "$tmp/real/"
printf '#include "kube/client.h"\n' >>"$tmp/real/src/serving/plan.c"
expect_rejects "a forbidden include added to the real tree fails" \
        'src/serving/plan.c:.*serving-core may not include "kube/client.h"' "$tmp/real"

finish
