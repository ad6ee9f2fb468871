#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Meson test `agent-disk` (suite agent): tests/agent/disk.py on a 16 MiB tmpfs model directory,
# mounted in a private mount namespace (unshare -m) so nothing leaks. Needs root (mount):
# otherwise a TAP skip with the reason.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: test-agent-disk.sh MODELPLANE_BINARY [AGENT FLAGS...]}
shift
if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP needs root to mount a small tmpfs (unshare -m)"
        exit 0
fi
if ! unshare -m true 2>/dev/null; then
        echo "1..0 # SKIP unshare -m is not permitted here (no CAP_SYS_ADMIN)"
        exit 0
fi
exec unshare -m --propagation private bash -c '
        set -euo pipefail
        d=$(mktemp -d /tmp/mp-agent-disk-XXXXXX)
        trap "umount \"$d\" 2>/dev/null; rmdir \"$d\"" EXIT
        mount -t tmpfs -o size=16m,mode=0755 mp-agent-disk "$d"
        python3 "$0" "$1" "$d" "${@:2}"
' "$here/disk.py" "$bin" "$@"
