#!/usr/bin/env bash
# tests/webhook/apiserver-webhook.sh MODELPLANE GEN_CERTS — suite `apiserver`.
#
# `modelplane webhook` registered with a real kube-apiserver (scripts/testenv):
#   - a CA and a serving certificate (IP SAN 127.0.0.1) made here, the webhook started on a free
#     port, a ValidatingWebhookConfiguration with url https://127.0.0.1:<port>/validate-trainedmodel
#     and that caBundle, scoped to this test's namespace by a namespaceSelector;
#   - kubectl create of invalid TrainedModels fails with KServe's exact messages, valid ones pass
#     (AdmissionReview v1beta1 as KServe registers it, then v1);
#   - the controller's own updates (finalizer, labels) pass; memory is immutable;
#   - a TrainedModel stored before the webhook with an invalid spec can still be deleted
#     (finalizer removal while deleting is allowed);
#   - the certificate is rotated while the API server keeps sending reviews: every review is
#     answered and new handshakes present the new certificate.
# Exits 77 (skip) when MODELPLANE_KUBECONFIG is unset. Every wait is a bounded loop.
set -euo pipefail

MODELPLANE=$1
GEN_CERTS=$2
ROOT=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

if [ -z "${MODELPLANE_KUBECONFIG:-}" ]; then
        echo "MODELPLANE_KUBECONFIG is unset: skipping (run under scripts/with-testenv)"
        exit 77
fi
export KUBECONFIG=$MODELPLANE_KUBECONFIG
if [ -n "${MODELPLANE_TESTBIN:-}" ] && [ -x "$MODELPLANE_TESTBIN/kubectl" ]; then
        KUBECTL=$MODELPLANE_TESTBIN/kubectl
else
        KUBECTL=$("$ROOT/scripts/testbin-build")/kubectl
fi
command -v openssl >/dev/null || { echo "openssl CLI missing: skipping"; exit 77; }

ID="wh-$$-$RANDOM"
NS="$ID"
VWC="$ID.modelplane.test"
WEBHOOK_NAME="trainedmodel.kserve-webhook-server.validator"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/modelplane-webhook-it.XXXXXX")
WPID=
FAILS=0

k() { "$KUBECTL" "$@"; }
log() { echo "# $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

cleanup() {
        set +e
        [ -n "$WPID" ] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
        k delete validatingwebhookconfiguration "$VWC" --ignore-not-found --wait=false >/dev/null 2>&1
        # Leftover finalizers would keep the namespace terminating forever.
        for tm in $(k -n "$NS" get trainedmodels -o name 2>/dev/null); do
                k -n "$NS" patch "$tm" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
        done
        k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
        rm -rf "$TMP"
}
trap cleanup EXIT

tm_yaml() { # name uri memory [finalizer]
        cat <<EOF
apiVersion: serving.kserve.io/v1alpha1
kind: TrainedModel
metadata:
  name: $1
  namespace: $NS
${4:+  finalizers: [$4]}
spec:
  inferenceService: Parent
  model:
    storageUri: $2
    framework: sklearn
    memory: $3
EOF
}

create_tm() { tm_yaml "$@" | k create -f -; }

# expect_denied MESSAGE CMD... : CMD fails and its stderr carries the webhook's denial MESSAGE.
expect_denied() {
        local msg=$1 out
        shift
        if out=$("$@" 2>&1); then
                fail "allowed, expected denial: $*"
                return
        fi
        if ! grep -qF "admission webhook \"$WEBHOOK_NAME\" denied the request: $msg" <<<"$out"; then
                fail "wrong denial for: $*"
                echo "  expected: $msg"
                echo "  got:      $out"
                return
        fi
        log "denied as expected: $msg"
}

expect_ok() {
        local out
        if ! out=$("$@" 2>&1); then
                fail "denied, expected success: $*: $out"
                return
        fi
        log "ok: $*"
}

name_err() {
        echo "the Trained Model \"$1\" is invalid: a Trained Model name must consist of alphanumeric characters, '_', or '-'. (e.g. \"my-Name\" or \"abc_123\", regex used for validation is '^[a-zA-Z0-9_-]+\$')"
}
uri_err() {
        echo "the Trained Model \"$1\" storageUri field is invalid. The storage uri must start with one of the prefixes: s3://, gs://, https://, http://. (the storage uri given is \"$2\")"
}

# ---- CRD, namespace, a legacy object stored before the webhook exists ----
CRD="$ROOT/deploy/crds/serving.kserve.io_trainedmodels.yaml"
[ -f "$CRD" ] || CRD="${MODELPLANE_KSERVE_DIR:-/nonexistent}/config/crd/minimal/serving.kserve.io_trainedmodels.yaml"
[ -f "$CRD" ] || { echo "no TrainedModel CRD found: skipping"; exit 77; }
# Other suites share the control plane: install the CRD only when it is missing, never change it.
k get crd trainedmodels.serving.kserve.io >/dev/null 2>&1 || k create -f "$CRD" >/dev/null 2>&1 || true
k wait --for=condition=Established crd/trainedmodels.serving.kserve.io --timeout=60s >/dev/null
for _ in $(seq 1 100); do
        k api-resources --api-group=serving.kserve.io 2>/dev/null | grep -q '^trainedmodels' && break
        sleep 0.1
done
k create namespace "$NS" >/dev/null
k label namespace "$NS" "modelplane-webhook-test=$ID" >/dev/null
tm_yaml legacy foo://stored/before/the/webhook 100Mi trainedmodel.finalizer | k create -f - >/dev/null
log "legacy TrainedModel with an invalid storageUri stored before registration"

# ---- certificates and the webhook process ----
"$GEN_CERTS" "$TMP" one 2001
"$GEN_CERTS" "$TMP" two 2002
mkdir -p "$TMP/certs"
cp "$TMP/one.crt" "$TMP/certs/tls.crt"
cp "$TMP/one.key" "$TMP/certs/tls.key"
: >"$TMP/webhook.log" # before the start: the background job opens it only once it runs
"$MODELPLANE" webhook --webhook-bind-address 127.0.0.1 --webhook-port 0 \
        --webhook-cert-dir "$TMP/certs" --log-level debug >>"$TMP/webhook.log" 2>&1 &
WPID=$!
PORT=
for _ in $(seq 1 100); do
        PORT=$(sed -n 's/.*listening on https:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$TMP/webhook.log")
        [ -n "$PORT" ] && break
        kill -0 "$WPID" 2>/dev/null || break
        sleep 0.1
done
[ -n "$PORT" ] || { cat "$TMP/webhook.log"; echo "FAIL: webhook did not start"; exit 1; }
log "webhook on 127.0.0.1:$PORT"

register() { # admissionReviewVersions as a JSON list
        k apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $VWC
webhooks:
- name: $WEBHOOK_NAME
  admissionReviewVersions: $1
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig:
    url: https://127.0.0.1:$PORT/validate-trainedmodel
    caBundle: $(base64 -w0 "$TMP/ca.crt")
  namespaceSelector:
    matchLabels:
      modelplane-webhook-test: $ID
  rules:
  - apiGroups: ["serving.kserve.io"]
    apiVersions: ["v1alpha1"]
    operations: ["CREATE", "UPDATE"]
    resources: ["trainedmodels"]
    scope: Namespaced
EOF
}

# The API server picks configuration changes up asynchronously: probe with a known-bad object.
wait_active() {
        for _ in $(seq 1 120); do
                if ! tm_yaml probe.x gs://b 1Mi | k create --dry-run=server -f - >/dev/null 2>"$TMP/probe.err" &&
                   grep -q "denied the request" "$TMP/probe.err"; then
                        return 0
                fi
                sleep 0.5
        done
        cat "$TMP/probe.err"
        echo "FAIL: webhook configuration never became active"
        exit 1
}

register '["v1beta1"]'
wait_active
log "registered with admissionReviewVersions [v1beta1]"

# ---- CREATE ----
expect_denied "$(name_err abc.123)" \
        create_tm abc.123 gs://kfserving/sklearn/iris 100Mi
expect_denied "$(uri_err bar foo://kfserving/sklearn/iris)" \
        create_tm bar foo://kfserving/sklearn/iris 100Mi
for n in bar 4abc-3 abc-3-x; do
        expect_ok create_tm $n gs://kfserving/sklearn/iris 100Mi
done
expect_ok create_tm s3m s3://bucket/m 1Gi

# ---- UPDATE ----
expect_denied "the Trained Model \"bar\" memory field is immutable. The memory was \"100Mi\" but it is updated to \"300Mi\"" \
        k -n "$NS" patch trainedmodel bar --type=merge -p '{"spec":{"model":{"memory":"300Mi"}}}'
expect_ok k -n "$NS" patch trainedmodel bar --type=merge -p '{"spec":{"model":{"memory":"104857600"}}}'
expect_denied "$(uri_err bar ftp://x)" \
        k -n "$NS" patch trainedmodel bar --type=merge -p '{"spec":{"model":{"storageUri":"ftp://x"}}}'
expect_ok k -n "$NS" patch trainedmodel bar --type=merge -p '{"spec":{"inferenceService":"parent2","model":{"framework":"sklearn2","storageUri":"gs://kfserving/sklearn2/iris"}}}'
# what the TrainedModel controller writes: finalizer and labels
expect_ok k -n "$NS" patch trainedmodel bar --type=merge \
        -p '{"metadata":{"finalizers":["trainedmodel.finalizer"],"labels":{"inferenceservice":"parent2","serving.kserve.io/trainedmodel-allocated":"parent2"}}}'
expect_ok k -n "$NS" patch trainedmodel bar --type=merge -p '{"metadata":{"finalizers":null}}'
# KServe's behaviour: an invalid stored object cannot get a plain update ...
expect_denied "$(uri_err legacy foo://stored/before/the/webhook)" \
        k -n "$NS" label trainedmodel legacy touched=yes
# ... but once it is being deleted, its finalizer can be removed and the deletion completes.
expect_ok k -n "$NS" delete trainedmodel legacy --wait=false
expect_ok k -n "$NS" patch trainedmodel legacy --type=merge -p '{"metadata":{"finalizers":null}}'
gone=no
for _ in $(seq 1 100); do
        if ! k -n "$NS" get trainedmodel legacy >/dev/null 2>&1; then gone=yes; break; fi
        sleep 0.1
done
[ "$gone" = yes ] && log "legacy TrainedModel deleted" || fail "legacy TrainedModel still present"

# ---- admission.k8s.io/v1 ----
register '["v1"]'
v1_seen=no
for _ in $(seq 1 120); do
        if grep -q 'answered admission.k8s.io/v1 review' "$TMP/webhook.log"; then v1_seen=yes; break; fi
        tm_yaml probe.y gs://b 1Mi | k create --dry-run=server -f - >/dev/null 2>&1 || true
        sleep 0.5
done
[ "$v1_seen" = yes ] && log "the API server now sends admission.k8s.io/v1 reviews" ||
        fail "no admission.k8s.io/v1 review seen after re-registration"
expect_denied "$(name_err abc.456)" \
        create_tm abc.456 gs://x 1Mi
expect_ok create_tm v1-ok gs://x 1Mi

# ---- rotation while the API server sends reviews ----
serial_now() {
        openssl s_client -connect "127.0.0.1:$PORT" -CAfile "$TMP/ca.crt" </dev/null 2>/dev/null |
                openssl x509 -noout -serial 2>/dev/null | sed 's/serial=//'
}
[ "$(serial_now)" = "2001" ] || fail "initial serial is not 2001: $(serial_now)"
(
        for i in $(seq 1 40); do
                if tm_yaml "flow-$i" gs://x 1Mi | "$KUBECTL" create --dry-run=server -f - >/dev/null 2>"$TMP/flow.err"; then
                        echo ok
                else
                        echo "bad: $(cat "$TMP/flow.err")"
                fi
                if tm_yaml "flow.$i" gs://x 1Mi | "$KUBECTL" create --dry-run=server -f - >/dev/null 2>"$TMP/flow2.err"; then
                        echo "bad: invalid name allowed"
                elif grep -qF "$(name_err "flow.$i")" "$TMP/flow2.err"; then
                        echo ok
                else
                        echo "bad: $(cat "$TMP/flow2.err")"
                fi
        done >"$TMP/flow.out"
) &
FLOW=$!
sleep 1
cp "$TMP/two.crt" "$TMP/certs/.tls.crt.new" && mv -f "$TMP/certs/.tls.crt.new" "$TMP/certs/tls.crt"
cp "$TMP/two.key" "$TMP/certs/.tls.key.new" && mv -f "$TMP/certs/.tls.key.new" "$TMP/certs/tls.key"
log "certificate files swapped (serial 2001 -> 2002)"
wait "$FLOW"
if grep -q '^bad' "$TMP/flow.out"; then
        fail "reviews failed during rotation:"
        grep '^bad' "$TMP/flow.out" | head -5
else
        log "$(grep -c '^ok' "$TMP/flow.out") reviews answered correctly during rotation"
fi
[ "$(serial_now)" = "2002" ] && log "new handshakes present serial 2002" ||
        fail "new handshakes present serial $(serial_now), expected 2002"
expect_denied "$(name_err after.rotation)" \
        create_tm after.rotation gs://x 1Mi

# ---- the deploy/webhook manifests are accepted by the API server (server-side dry run) ----
in_ns() { sed "s/namespace: modelplane-system/namespace: $NS/" "$@"; }
expect_ok sh -c "sed 's/namespace: modelplane-system/namespace: $NS/' '$ROOT/deploy/webhook/service.yaml' | '$KUBECTL' create --dry-run=server -f -"
expect_ok k create --dry-run=server -f "$ROOT/deploy/webhook/validatingwebhookconfiguration.yaml"
if [ -f "$ROOT/deploy/controller/deployment.yaml" ]; then
        in_ns "$ROOT/deploy/controller/deployment.yaml" | k create -f - >/dev/null
        expect_ok k -n "$NS" patch deployment modelplane-controller --dry-run=server \
                --patch-file "$ROOT/deploy/webhook/deployment-patch.yaml"
fi
# (cert-manager's own kinds need its CRDs, which the test control plane does not have)
expect_ok k create --dry-run=server -f "$ROOT/deploy/webhook/cert-manager/validatingwebhookconfiguration.yaml"

if [ "$FAILS" -ne 0 ]; then
        echo "--- webhook log (tail)"
        tail -20 "$TMP/webhook.log"
        echo "$FAILS check(s) failed"
        exit 1
fi
echo "all webhook apiserver checks passed"
