#!/usr/bin/env bash
# The console's browser tests (meson test browser-console): builds ui/dist (scripts/ui-build,
# npm ci of the committed lockfile), then runs the Node test files of tests/browser with
# playwright-core driving /usr/bin/chromium. Screenshots: $MODELPLANE_BROWSER_ARTIFACTS.
# Skips (77) only when chromium is missing.
set -euo pipefail
ROOT=${MODELPLANE_SOURCE_ROOT:?run under meson test}
CHROMIUM=${MODELPLANE_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
        echo "SKIP: $CHROMIUM is not installed (scripts/install-deps installs Debian's chromium)"
        exit 77
fi
# Without `modelplane ui` or a test control plane (scripts/with-testenv) only the smoke tier
# runs (registry and catalog flows behind tests/browser/devserver.mjs); the test output says so.
"$ROOT/scripts/ui-build"
cd "$ROOT"
exec node --test --test-concurrency=1 tests/browser/*.test.mjs
