#!/usr/bin/env bash
# Two `modelplane controller` processes against one API server: exactly one reconciles; SIGKILL
# of the leader hands over within the lease duration; SIGTERM releases the lease so the
# follower takes over at once.
. "$(dirname "$0")/lib.sh"
install_crds
KC=$(install_rbac)
NS=le-$$
kubectl create namespace "$NS" >/dev/null
LEASE=le-test-$$
common=(--leader-elect --leader-election-id "$LEASE" --leader-election-namespace modelplane-system)

start_controller a "$KC" "${common[@]}"; A=$LAST_PID
wait_for 30 grep -q 'Acquired leader lease' "$T/a.log" || fail "a never became leader"
start_controller b "$KC" "${common[@]}"; B=$LAST_PID
sleep 4
grep -q 'Acquired leader lease' "$T/b.log" && fail "b became leader while a holds the lease"
holder=$(kubectl -n modelplane-system get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}')
[ -n "$holder" ] || fail "lease has no holder"
ok "one leader ($holder), one follower"

# Only the leader reconciles: a TrainedModel gets its parent label, and only a's log shows work.
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: parent, namespace: $NS}
spec: {predictor: {sklearn: {resources: {limits: {memory: 1Gi}}}}}
---
apiVersion: serving.kserve.io/v1alpha1
kind: TrainedModel
metadata: {name: m1, namespace: $NS}
spec: {inferenceService: parent, model: {storageUri: "s3://b/m1", framework: sklearn, memory: 10Mi}}
YAML
wait_for 90 sh -c "kubectl -n $NS get tm m1 -o jsonpath='{.metadata.labels.inferenceservice}' | grep -qx parent" ||
        fail "the leader did not reconcile"
grep -q 'Started 1 controller' "$T/b.log" && fail "the follower started its controllers"
ok "only the leader runs controllers"

# SIGKILL the leader: b takes over within the lease duration (15 s) plus a retry period.
kill -9 "$A"
t0=$(date +%s)
wait_for 25 grep -q 'Acquired leader lease' "$T/b.log" || fail "b did not take over after SIGKILL"
t1=$(date +%s)
ok "follower took over $((t1 - t0)) s after SIGKILL of the leader (lease 15 s)"

# SIGTERM on the new leader releases the lease: a new process acquires it at once.
start_controller c "$KC" "${common[@]}"; C=$LAST_PID
sleep 3
grep -q 'Acquired leader lease' "$T/c.log" && fail "c became leader while b holds the lease"
kill -TERM "$B"
wait "$B" 2>/dev/null || true
holder=$(kubectl -n modelplane-system get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}')
wait_for 6 grep -q 'Acquired leader lease' "$T/c.log" || fail "c did not take over promptly after SIGTERM released the lease (holder now '$holder')"
ok "SIGTERM released the lease; the follower acquired it without waiting for expiry"
kill -TERM "$C"; wait "$C" 2>/dev/null || true
kubectl delete namespace "$NS" --wait=false >/dev/null
