# Sourced by the tests of the tree checkers (test-check-banned.sh, test-check-layers.sh), which
# set check= to the checker's path before calling the functions below. Gives them $src (the
# source tree), a temporary directory $tmp removed on exit, and TAP-like lines counted in $fails:
#   expect_passes NAME ROOT          the checker passes on ROOT
#   expect_rejects NAME PATTERN ROOT the checker exits 1 on ROOT with a line matching PATTERN (ERE)
#   finish                           exits 1 if any expectation failed
src=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect_passes() {
        local name=$1 root=$2 out
        if out=$("$check" --root "$root" 2>&1); then
                echo "ok - $name"
        else
                echo "not ok - $name:"
                sed 's/^/    /' <<<"$out"
                fails=$((fails + 1))
        fi
}

expect_rejects() {
        local name=$1 pattern=$2 root=$3 out rc=0
        out=$("$check" --root "$root" 2>&1) || rc=$?
        if [ "$rc" != 1 ] || ! grep -qE -- "$pattern" <<<"$out"; then
                echo "not ok - $name: expected exit 1 and /$pattern/, got exit $rc:"
                sed 's/^/    /' <<<"$out"
                fails=$((fails + 1))
        else
                echo "ok - $name"
        fi
}

finish() {
        [ "$fails" = 0 ] || { echo "$fails check(s) failed"; exit 1; }
}
