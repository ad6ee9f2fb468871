# Shared helpers for the controller's shell integration tests (sourced).
# They run against the control plane of scripts/testenv (MODELPLANE_TESTENV_DIR); without it
# they exit 77, which meson reports as skipped.
set -euo pipefail
if [ -z "${MODELPLANE_TESTENV_DIR:-}" ] || [ -z "${MODELPLANE_KUBECONFIG:-}" ]; then
        echo "SKIP: no test control plane (run under scripts/with-testenv)"
        exit 77
fi
: "${MODELPLANE_BIN:?MODELPLANE_BIN must point at the modelplane binary}"
ROOT=${MODELPLANE_SOURCE_ROOT:?}
export KUBECONFIG=$MODELPLANE_KUBECONFIG
export PATH="${MODELPLANE_TESTBIN:-$("$ROOT/scripts/testbin-build")}:$PATH"
T=$(mktemp -d "${TMPDIR:-/tmp}/mp-ctl-test.XXXXXX")
PIDS=()
cleanup_lib() {
        for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
        rm -rf "$T"
}
trap cleanup_lib EXIT

fail() {
        echo "FAIL: $*" >&2
        for f in "$T"/*.log; do
                [ -f "$f" ] || continue
                echo "--- last lines of $(basename "$f")" >&2
                tail -n 15 "$f" >&2
        done
        exit 1
}
ok() { echo "ok - $*"; }

# wait_for SECONDS CMD...: polls CMD every 0.2 s until it succeeds; bounded.
wait_for() {
        local limit=$1; shift
        local n=$((limit * 5))
        for _ in $(seq "$n"); do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.2
        done
        return 1
}

# The controller's RBAC and a kubeconfig with a token bound to exactly the shipped roles.
install_rbac() {
        kubectl apply -f "$ROOT/deploy/controller/namespace.yaml" -f "$ROOT/deploy/controller/serviceaccount.yaml" \
                -f "$ROOT/deploy/controller/clusterrole.yaml" -f "$ROOT/deploy/controller/clusterrolebinding.yaml" \
                -f "$ROOT/deploy/controller/role.yaml" >/dev/null
        "$ROOT/scripts/testenv" kubeconfig "$MODELPLANE_TESTENV_DIR" modelplane-system/modelplane-controller
}

install_crds() {
        "$ROOT/scripts/testenv" install-crds "$MODELPLANE_TESTENV_DIR" "$ROOT/deploy/crds" >/dev/null
}

# start_controller NAME KUBECONFIG ARGS...: starts a controller, logs in $T/NAME.log; sets
# LAST_PID and waits until its probe port is known (PROBE_PORT_<NAME>).
start_controller() {
        local name=$1 kc=$2; shift 2
        "$MODELPLANE_BIN" controller --kubeconfig "$kc" --metrics-bind-address 127.0.0.1:0 \
                --health-probe-bind-address 127.0.0.1:0 "$@" >"$T/$name.log" 2>&1 &
        LAST_PID=$!
        PIDS+=("$LAST_PID")
        wait_for 20 grep -q 'probes on port' "$T/$name.log" || fail "$name did not start: $(cat "$T/$name.log")"
}
probe_port() { grep -o 'probes on port [0-9]*' "$T/$1.log" | grep -o '[0-9]*$'; }
