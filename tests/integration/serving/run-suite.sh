#!/usr/bin/env bash
# run-suite.sh VARIANT TEST [ARGS...] — run one serving integration test binary against its own
# fresh control plane (scripts/with-testenv: etcd + kube-apiserver + kube-controller-manager)
# whose CRDs are the VARIANT's, installed by `testenv start --crds` before kube-controller-manager
# starts (its garbage collector must know TrainedModels, W13).
#
#   deploy          the project's CRDs (deploy/crds)
#   kserve          KServe's real CRDs: config/crd/full/serving.kserve.io_{trainedmodels,
#                   inferenceservices}.yaml of the kserve Go module (scripts/kserve-module)
#   kserve-minimal  KServe's minimal CRDs (config/crd/minimal: no schema, invalid specs reach
#                   the controller)
#
# CRDs are cluster-scoped, so each variant gets its own control plane instead of sharing the one
# of an outer `scripts/with-testenv meson test ...` run. The tests are opt-in like the apiserver
# suite: without MODELPLANE_KUBECONFIG or MODELPLANE_TESTBIN (the built kube binaries) they skip
# (exit 77). The kserve variants read the module from MODELPLANE_KSERVE_DIR (scripts/test sets
# it), else fetch it with scripts/kserve-module; they skip, naming why, when neither works.
set -euo pipefail

variant=$1
shift
src=${MODELPLANE_SOURCE_ROOT:?}

if [ -z "${MODELPLANE_KUBECONFIG:-}" ] && [ -z "${MODELPLANE_TESTBIN:-}" ]; then
        echo "SKIP: no test control plane (run under scripts/with-testenv or set MODELPLANE_TESTBIN)"
        exit 77
fi

case $variant in
deploy)
        crds=("$src/deploy/crds")
        ;;
kserve | kserve-minimal)
        kserve=${MODELPLANE_KSERVE_DIR:-}
        if [ -z "$kserve" ] && ! kserve=$("$src/scripts/kserve-module"); then
                echo "SKIP: the kserve Go module could not be fetched (scripts/kserve-module)"
                exit 77
        fi
        kind=full
        [ "$variant" = kserve-minimal ] && kind=minimal
        crds=("$kserve/config/crd/$kind/serving.kserve.io_trainedmodels.yaml"
              "$kserve/config/crd/$kind/serving.kserve.io_inferenceservices.yaml")
        for c in "${crds[@]}"; do
                [ -f "$c" ] || { echo "run-suite.sh: $c is missing" >&2; exit 1; }
        done
        ;;
*)
        echo "run-suite.sh: unknown variant $variant" >&2
        exit 2
        ;;
esac

# KServe's full InferenceService CRD is ~2 MB: a client-side `kubectl apply` (what testenv's
# install-crds runs) fails on it (the last-applied-configuration annotation is limited to
# 256 KiB) and install-crds does not notice. Until testenv applies server-side, run testenv with
# a bin directory whose kubectl turns `apply` into `apply --server-side --force-conflicts`, and
# retries `wait` (testenv's `kubectl wait --for=condition=Established` right after the apply can
# fail with ".status.conditions accessor error" while the big CRD has no status yet).
if [ "$variant" = kserve ]; then
        real=${MODELPLANE_TESTBIN:-$("$src/scripts/testbin-build")}
        shim=$(mktemp -d "${TMPDIR:-/tmp}/modelplane-serving-bin.XXXXXX")
        trap 'rm -rf "$shim"' EXIT
        for b in "$real"/*; do
                ln -s "$b" "$shim/$(basename "$b")"
        done
        rm -f "$shim/kubectl"
        cat >"$shim/kubectl" <<SHIM
#!/usr/bin/env bash
args=()
wait=
for a in "\$@"; do
        args+=("\$a")
        [ "\$a" = apply ] && args+=(--server-side --force-conflicts)
        [ "\$a" = wait ] && wait=1
done
[ -n "\$wait" ] || exec "$real/kubectl" "\${args[@]}"
for i in 1 2 3 4 5 6 7 8 9 10; do
        "$real/kubectl" "\${args[@]}" && exit 0
        sleep 1
done
exit 1
SHIM
        chmod +x "$shim/kubectl"
        export MODELPLANE_TESTBIN=$shim
fi

args=""
for c in "${crds[@]}"; do
        args+=" --crds $c"
done
# extra kube-apiserver flags of one test (e.g. a low max-inflight), "--flag=value ..."
for a in ${MODELPLANE_SERVING_APISERVER_ARGS:-}; do
        args+=" --apiserver-arg $a"
done
# not inherited: an outer run's --crds must not mix into this variant's CRDs
export MODELPLANE_TESTENV_ARGS="$args"
export MODELPLANE_SERVING_VARIANT=$variant
"$src/scripts/with-testenv" "$@"
