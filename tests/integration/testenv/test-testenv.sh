#!/usr/bin/env bash
# Checks scripts/testenv itself: start with kcm, admin/static/ServiceAccount credentials, CRD
# installation, garbage collection and namespace deletion (kcm), restart-apiserver, compact, and
# that stop ends every process and removes the directory. Needs the test binaries: runs when
# MODELPLANE_TESTBIN or MODELPLANE_TESTENV_DIR (scripts/with-testenv) is set, else skips (77).
set -euo pipefail

ROOT=${MODELPLANE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
T=$ROOT/scripts/testenv

if [ -z "${MODELPLANE_TESTBIN:-}" ]; then
        if [ -n "${MODELPLANE_TESTENV_DIR:-}" ] && [ -f "$MODELPLANE_TESTENV_DIR/env" ]; then
                MODELPLANE_TESTBIN=$(. "$MODELPLANE_TESTENV_DIR/env" && echo "$MODELPLANE_TESTBIN")
        else
                echo "skip: MODELPLANE_TESTBIN / MODELPLANE_TESTENV_DIR not set (run under scripts/with-testenv)"
                exit 77
        fi
fi
export MODELPLANE_TESTBIN
KUBECTL=$MODELPLANE_TESTBIN/kubectl

WORK=$(mktemp -d "${TMPDIR:-/tmp}/test-testenv.XXXXXX")
D=$WORK/te
trap '"$T" stop "$D" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}
k() { "$T" kubectl "$D" "$@"; }
# alive PID: running and not a zombie (an exited daemon may wait a moment for its reaper)
alive() {
        local st
        st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
        [ -n "$st" ] && [[ "$st" != Z* ]]
}

cat >"$WORK/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.testenv.modelplane.dev}
spec:
  group: testenv.modelplane.dev
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing, listKind: ThingList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML

"$T" start "$D" --with-kcm --crds "$WORK/crd.yaml"
"$T" status "$D" >/dev/null || fail "a process is not running after start"
[ "$(wc -l <"$D/pids")" -eq 3 ] || fail "expected etcd, apiserver and kcm in $D/pids"
grep -q "^export MODELPLANE_KUBECONFIG=$D/kubeconfig\$" <("$T" env "$D") || fail "env output"

# the CRD is served as soon as start returns
k get things -A >/dev/null || fail "CRD not served after start --crds"

# credentials: admin certificate, static token users, ServiceAccount tokens
k auth can-i '*' '*' | grep -qx yes || fail "admin is not cluster-admin"
kn=$("$T" kubeconfig "$D" nobody)
if "$KUBECTL" --kubeconfig "$kn" get configmaps -n default 2>"$WORK/err"; then
        fail "nobody can list configmaps"
fi
grep -q 'User "nobody" cannot list resource "configmaps"' "$WORK/err" || fail "403 message: $(cat "$WORK/err")"
ks=$("$T" kubeconfig "$D" team/bot)
who=$("$KUBECTL" --kubeconfig "$ks" auth whoami -o jsonpath='{.status.userInfo.username}')
[ "$who" = system:serviceaccount:team:bot ] || fail "ServiceAccount token authenticates as '$who'"

# kcm: garbage collection of a dependent, and namespace deletion
k -n default create configmap owner >/dev/null
uid=$(k -n default get configmap owner -o jsonpath='{.metadata.uid}')
k -n default apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "$uid"}]
YAML
k -n default delete configmap owner >/dev/null
k -n default wait --for=delete configmap/dependent --timeout=90s >/dev/null || fail "dependent not garbage-collected"
k create namespace doomed >/dev/null
k delete namespace doomed --timeout=90s >/dev/null || fail "namespace deletion did not finish"

# restart-apiserver: new process, same port, data kept
port=$(awk '$1 == "apiserver" { print $2 }' "$D/ports")
old=$(awk '$1 == "apiserver" { print $2 }' "$D/pids")
k -n default create configmap survivor >/dev/null
"$T" restart-apiserver "$D"
new=$(awk '$1 == "apiserver" { print $2 }' "$D/pids")
[ "$new" != "$old" ] || fail "restart-apiserver kept the old pid"
! alive "$old" || fail "old apiserver still alive"
[ "$(awk '$1 == "apiserver" { print $2 }' "$D/ports")" = "$port" ] || fail "port changed"
k -n default get configmap survivor >/dev/null || fail "data lost across restart"

# compact prints the revision it compacted at
rev=$("$T" compact "$D")
[[ "$rev" =~ ^[0-9]+$ ]] || fail "compact printed '$rev'"

# stop: every process gone, directory removed
pids=$(awk '{ print $2 }' "$D/pids")
"$T" stop "$D"
for p in $pids; do
        ! alive "$p" || fail "pid $p survived stop"
done
[ ! -e "$D" ] || fail "$D not removed"
"$T" stop "$D" || fail "stop of a missing directory must succeed"
echo "testenv: all checks passed"
