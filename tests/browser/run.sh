#!/usr/bin/env bash
# The console's browser tests (meson test browser-console): builds ui/dist (scripts/ui-build,
# npm ci of the committed lockfile), then runs the Node test files of tests/browser with
# playwright-core driving /usr/bin/chromium. Screenshots: $MODELPLANE_BROWSER_ARTIFACTS.
set -euo pipefail
ROOT=${MODELPLANE_SOURCE_ROOT:?run under meson test}
if [ -z "${MODELPLANE_TESTENV_DIR:-}" ]; then
        echo "SKIP: no test control plane (run under scripts/with-testenv)"
        exit 77
fi
CHROMIUM=${MODELPLANE_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
        echo "SKIP: $CHROMIUM is not installed (scripts/install-deps installs Debian's chromium)"
        exit 77
fi
if ! "${MODELPLANE_BIN:?}" ui --help >/dev/null 2>&1; then
        echo "SKIP: this modelplane has no ui subcommand"
        exit 77
fi
"$ROOT/scripts/ui-build"
cd "$ROOT"
exec node --test --test-concurrency=1 tests/browser/*.test.mjs
