#!/usr/bin/env bash
# Every kustomize overlay in deploy/overlays renders with `kubectl kustomize` and passes
# `kubectl apply --dry-run=server` on the real API server; the rendered registry and catalog
# Deployments' container args and env are run as local processes (kustomize-run.py: as the
# kubelet would, listen addresses moved to loopback port 0) and their probes answer, so the
# manifests cannot drift from the command line. Security settings are checked on every
# rendered Deployment.
. "$(dirname "$0")/lib.sh"
install_crds
kubectl apply -f "$ROOT/deploy/controller/namespace.yaml" >/dev/null
n=0
for o in "$ROOT"/deploy/overlays/*/; do
        o=${o%/}
        name=$(basename "$o")
        kubectl kustomize "$o" >"$T/$name.yaml" 2>"$T/err" || fail "$name does not render: $(cat "$T/err")"
        # cert-manager's own kinds need its CRDs, which the test cluster lacks: all but those
        python3 - "$T/$name.yaml" >"$T/$name.core.yaml" <<'PY'
import re, sys
docs = re.split(r"(?m)^---\n", open(sys.argv[1]).read())
print("---\n".join(d for d in docs if not re.search(r"(?m)^apiVersion: cert-manager\.io/", d)))
PY
        kubectl apply --dry-run=server -f "$T/$name.core.yaml" >/dev/null 2>"$T/err" ||
                fail "$name: apply --dry-run=server: $(cat "$T/err")"
        # as one {"items": [...]} (kubectl prints one JSON document per object, or a List)
        kubectl create --dry-run=client -o json -f "$T/$name.core.yaml" | python3 -c '
import json, sys
s, d, out = sys.stdin.read(), json.JSONDecoder(), []
i = 0
while i < len(s):
    if s[i].isspace():
        i += 1
        continue
    o, i = d.raw_decode(s, i)
    out += o["items"] if o.get("kind") == "List" else [o]
json.dump({"items": out}, sys.stdout)' >"$T/$name.json" || fail "$name: cannot convert to JSON"
        python3 - "$T/$name.json" "$name" <<'PY' || fail "$name: security settings"
import json, sys
for d in json.load(open(sys.argv[1]))["items"]:
    if d["kind"] != "Deployment":
        continue
    pod = d["spec"]["template"]["spec"]
    where = f"{sys.argv[2]}: {d['metadata']['name']}"
    assert pod["securityContext"].get("runAsNonRoot") is True, f"{where}: runAsNonRoot"
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", f"{where}: seccomp"
    for c in pod["containers"]:
        sc = c["securityContext"]
        assert sc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation"
        assert sc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem"
        assert "requests" in c.get("resources", {}), f"{where}: resource requests"
        assert "readinessProbe" in c and "livenessProbe" in c, f"{where}: probes"
PY
        n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "only $n overlays"
grep -q -- '--enable-webhook' "$T/controller-webhook.yaml" || fail "controller-webhook: no --enable-webhook"
grep -q 'cert-manager.io/inject-ca-from: modelplane-system/serving-cert' \
        "$T/controller-webhook-cert-manager.yaml" || fail "cert-manager: no CA injection"
grep -q '^kind: Certificate$' "$T/controller-webhook-cert-manager.yaml" || fail "cert-manager: no Certificate"
! grep -q -- '--enable-webhook' "$T/controller.yaml" || fail "controller: the webhook is on"
ok "$n overlays render and pass --dry-run=server"

# the Service and ConfigMap names other components and clients rely on
grep -q '^  name: model-catalog$' "$T/catalog.yaml" || fail "no Service model-catalog"
python3 - "$T/catalog.json" "$T/registry-sqlite.json" "$T/registry-postgres.json" <<'PY' || fail "names"
import json, sys
cat, sq, pg = (json.load(open(f))["items"] for f in sys.argv[1:])
def one(items, kind, name):
    m = [i for i in items if i["kind"] == kind and i["metadata"]["name"] == name]
    assert len(m) == 1, f"{kind}/{name}"
    return m[0]
p = one(cat, "Service", "model-catalog")["spec"]["ports"][0]
assert (p["port"], p["name"]) == (8080, "http-api"), p
s = one(sq, "Service", "model-registry-service")
assert s["metadata"]["labels"]["component"] == "model-registry"
assert s["spec"]["ports"][0]["name"] == "http-api"
assert set(one(sq, "ConfigMap", "model-registry-configmap")["data"]) == {
    "MODEL_REGISTRY_DATA_STORE_TYPE", "MODEL_REGISTRY_REST_SERVICE_HOST", "MODEL_REGISTRY_REST_SERVICE_PORT"}
d = one(sq, "Deployment", "model-registry")["spec"]
assert d["replicas"] == 1 and d["strategy"]["type"] == "Recreate", d.get("strategy")
assert one(sq, "PersistentVolumeClaim", "model-registry-data")
d = one(pg, "Deployment", "model-registry")["spec"]
assert d["replicas"] > 1
env = d["template"]["spec"]["containers"][0]["env"]
assert any(e.get("valueFrom", {}).get("secretKeyRef", {}).get("name") == "model-registry-db" for e in env)
PY
ok "model-catalog:8080 http-api, model-registry-service, model-registry-configmap, SQLite Recreate x1, PostgreSQL xN"

# run_rendered OVERLAY DEPLOYMENT [SECRET=VALUE...]: the rendered container as a local process,
# then its probes
run_rendered() {
        local overlay=$1 dep=$2 w=$T/run-$1 spec pid port
        shift 2
        mkdir -p "$w"
        python3 "$ROOT/tests/integration/controller/kustomize-run.py" "$T/$overlay.json" "$dep" "$w" "$@" \
                >"$w/spec.json" || fail "$overlay: cannot turn $dep into a process"
        mapfile -d '' -t argv < <(python3 -c 'import json,sys; sys.stdout.write("\0".join(json.load(open(sys.argv[1]))["argv"]))' "$w/spec.json")
        mapfile -d '' -t envs < <(python3 -c 'import json,sys; sys.stdout.write("\0".join(f"{k}={v}" for k,v in json.load(open(sys.argv[1]))["env"].items()))' "$w/spec.json")
        env -i PATH="$PATH" HOME="$w" "${envs[@]}" "$MODELPLANE_BIN" "${argv[@]}" >"$w/out" 2>"$T/$overlay.log" &
        pid=$!
        PIDS+=("$pid")
        wait_for 60 grep -q '^listening on ' "$w/out" || fail "$overlay: ${argv[*]} did not start"
        port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$w/out")
        while read -r kind path; do
                if [ "$kind" = http ]; then
                        curl -fsS -o /dev/null "http://127.0.0.1:$port$path" || fail "$overlay: probe $path"
                else
                        (exec 3<>"/dev/tcp/127.0.0.1/$port") || fail "$overlay: tcp probe"
                fi
        done < <(python3 -c 'import json,sys; [print(k, p or "-") for k,p in json.load(open(sys.argv[1]))["probes"]]' "$w/spec.json")
        echo "$port" >"$w/port"
        ok "$overlay: '${argv[*]}' runs and its probes answer"
}
run_rendered registry-sqlite model-registry
curl -fsS -X POST "http://127.0.0.1:$(cat "$T/run-registry-sqlite/port")/api/model_registry/v1alpha3/registered_models" \
        -H 'Content-Type: application/json' -d '{"name":"k"}' >/dev/null || fail "registry-sqlite: create"
[ -s "$T/run-registry-sqlite/data/model-registry.db" ] || fail "registry-sqlite: the database is not on the volume"
run_rendered catalog model-catalog-server
curl -fsS "http://127.0.0.1:$(cat "$T/run-catalog/port")/api/model_catalog/v1alpha1/models" |
        grep -q '"sample-model"' || fail "catalog: the sources ConfigMap's model is not served"
if [ -n "${MODELPLANE_PG_DSN:-}" ]; then
        run_rendered registry-postgres model-registry "model-registry-db/dsn=$MODELPLANE_PG_DSN"
else
        echo "registry-postgres as a process: skipped (no MODELPLANE_PG_DSN)"
fi
