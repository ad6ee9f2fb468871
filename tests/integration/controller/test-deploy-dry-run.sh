#!/usr/bin/env bash
# Every manifest in deploy/ (and examples/async-upload-job.yaml) passes `kubectl apply --dry-run=server` against the real API server.
. "$(dirname "$0")/lib.sh"
install_crds
kubectl apply -f "$ROOT/deploy/controller/namespace.yaml" >/dev/null
n=0
while IFS= read -r f; do
        # kustomize files, and what base/ and overlays/ hold: test-kustomize.sh renders those
        case $f in
        */kustomization.yaml | */*-patch.yaml | "$ROOT"/deploy/base/* | "$ROOT"/deploy/overlays/*)
                continue ;;
        esac
        # patches (no kind) are applied with kubectl patch, not apply
        if ! grep -q '^kind:' "$f"; then
                echo "skip $f (a patch, not a manifest)"
                continue
        fi
        # cert-manager resources need cert-manager's CRDs, which a plain cluster lacks
        if grep -q 'cert-manager.io/v1' "$f"; then
                echo "skip $f (needs cert-manager CRDs)"
                continue
        fi
        # a ClusterStorageContainer needs KServe's own CRD for it, from KServe's Go module
        if grep -q '^kind: ClusterStorageContainer' "$f"; then
                crd=${MODELPLANE_KSERVE_DIR:-}/config/crd/full/clusterstoragecontainer/serving.kserve.io_clusterstoragecontainers.yaml
                if [ -z "${MODELPLANE_KSERVE_DIR:-}" ] || [ ! -f "$crd" ]; then
                        echo "skip $f (needs KServe's ClusterStorageContainer CRD: MODELPLANE_KSERVE_DIR is not set)"
                        continue
                fi
                kubectl apply --server-side -f "$crd" >/dev/null 2>"$T/err" || fail "$crd: $(cat "$T/err")"
                kubectl wait --for=condition=Established --timeout=60s \
                        crd/clusterstoragecontainers.serving.kserve.io >/dev/null 2>"$T/err" ||
                        fail "ClusterStorageContainer CRD not established: $(cat "$T/err")"
        fi
        kubectl apply --dry-run=server -f "$f" >/dev/null 2>"$T/err" || fail "$f: $(cat "$T/err")"
        n=$((n + 1))
done < <(find "$ROOT/deploy" -name '*.yaml' | sort)
[ "$n" -gt 5 ] || fail "only $n manifests found"
# the model transfer Job of docs/transfer.md (the namespace test-deploy-dry-run's apply uses)
kubectl apply --dry-run=server -n modelplane-system -f "$ROOT/examples/async-upload-job.yaml" \
        >/dev/null 2>"$T/err" || fail "examples/async-upload-job.yaml: $(cat "$T/err")"
n=$((n + 1))
ok "$n manifests accepted by kubectl apply --dry-run=server"
