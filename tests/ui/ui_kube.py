# SPDX-License-Identifier: Apache-2.0
"""modelplane ui against the real test control plane (kube-apiserver + etcd, the project's CRDs;
started by tests/integration/serving/run-suite.sh). The ui runs as the ServiceAccount of
deploy/base/ui with that RBAC (impersonate users, list namespaces) and nothing else, so the
tests also prove the shipped role is enough. user1 may read team-a only; user2 nothing.

Covered: namespaces offered per user (SelfSubjectAccessReview fallback), 403 naming the user,
verb, resource and namespace, InferenceServices, TrainedModels with every condition and n/m
loaded, Events newest first, ETag/304 polling, bearer passthrough (SelfSubjectReview for the
name, 401 for a bad token), a server without the impersonate right, an unreachable API server.
And who may use the registry and the catalog (a real `modelplane registry` on SQLite and a real
`modelplane catalog` behind the ui): only users whom RBAC lets get the registry's (the
catalog's) Service, by user, by group or by bearer token; every route refused alike to the others,
reads and writes; a grant or a revocation taking effect within the short cache time; a server
whose role lacks subjectaccessreviews. Model transfer jobs as a user holding the shipped
ClusterRole modelplane-transfer-jobs: the Job, its Secrets and ConfigMap as upstream's BFF
shapes them, list, get, events, status from the Job and its pods, retry, delete; refusals (403
with nothing left behind, 400 naming the field, 404, 409, 503 without a registry address)."""
import json
import os
import re
import subprocess
import sys
import tempfile

from uitest import SRC, Server, Skip, Tap, call, expect, expect_error, wait_until

DIR = os.environ.get("MODELPLANE_TESTENV_DIR")
if not DIR:
    print("SKIP: no test control plane (MODELPLANE_TESTENV_DIR unset)")
    sys.exit(77)
TESTENV = os.path.join(SRC, "scripts", "testenv")
tap = Tap()
# UI_KUBE_ONLY="test_a test_b": run only those (a quicker loop by hand; the setup runs whole)
ONLY = os.environ.get("UI_KUBE_ONLY", "").split()


def kubectl(*args, stdin=None):
    r = subprocess.run([TESTENV, "kubectl", DIR, *args], input=stdin, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {r.stderr}")
    return r.stdout


def testenv(*args):
    return subprocess.run([TESTENV, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def apply(obj):
    kubectl("apply", "-f", "-", stdin=json.dumps(obj))


# ---- the cluster ----
kubectl("apply", "-f", os.path.join(SRC, "deploy/controller/namespace.yaml"))
kubectl("apply", "-n", "modelplane-system", "-f", os.path.join(SRC, "deploy/base/ui/serviceaccount.yaml"),
        "-f", os.path.join(SRC, "deploy/base/ui/rbac.yaml"))
for ns in ("team-a", "team-b"):
    apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
       "metadata": {"name": "viewer", "namespace": "team-a"},
       "rules": [{"apiGroups": ["serving.kserve.io"],
                  "resources": ["inferenceservices", "trainedmodels"],
                  "verbs": ["get", "list", "watch"]},
                 {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list"]}]})
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
       "metadata": {"name": "viewer-user1", "namespace": "team-a"},
       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "viewer"},
       "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "user1"}]})

# user3 may list InferenceServices in every namespace (a ClusterRole), but not namespaces
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
       "metadata": {"name": "mp-ui-test-isvc-reader"},
       "rules": [{"apiGroups": ["serving.kserve.io"], "resources": ["inferenceservices"],
                  "verbs": ["get", "list", "watch"]}]})
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
       "metadata": {"name": "mp-ui-test-isvc-reader-user3"},
       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                   "name": "mp-ui-test-isvc-reader"},
       "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "user3"}]})


def isvc(ns, name, memory="1Gi"):
    return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"predictor": {"minReplicas": 1, "sklearn": {
                "protocolVersion": "v1",
                "resources": {"limits": {"cpu": "100m", "memory": memory},
                              "requests": {"cpu": "100m", "memory": memory}}}}}}


def tm(ns, name, parent, memory="256Mi"):
    return {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "TrainedModel",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"inferenceService": parent,
                     "model": {"storageUri": f"gs://bucket/{name}", "framework": "sklearn",
                               "memory": memory}}}


apply(isvc("team-a", "sklearn"))
apply(isvc("team-b", "secret-isvc"))
for name, parent in (("m1", "sklearn"), ("m2", "sklearn"), ("other", "elsewhere")):
    apply(tm("team-a", name, parent))
CONDITIONS = [
    {"type": "FrameworkSupported", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"},
    {"type": "InferenceServiceReady", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"},
    {"type": "IsMMSPredictor", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"},
    {"type": "MemoryResourceAvailable", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"},
    {"type": "ModelLoaded", "status": "False", "reason": "Loading",
     "message": "1/2 replicas loaded", "lastTransitionTime": "2026-12-01T10:00:01Z"},
    {"type": "Ready", "status": "False", "reason": "ModelLoading",
     "lastTransitionTime": "2026-12-01T10:00:01Z"},
]
kubectl("patch", "trainedmodel", "m1", "-n", "team-a", "--subresource=status", "--type=merge",
        "-p", json.dumps({"status": {"conditions": CONDITIONS, "url": "http://sklearn/m1"}}))


def event(name, kind, obj, reason, when, etype="Normal"):
    apply({"apiVersion": "v1", "kind": "Event",
           "metadata": {"name": name, "namespace": "team-a"},
           "involvedObject": {"kind": kind, "name": obj, "namespace": "team-a"},
           "reason": reason, "message": f"{reason} <b>{obj}</b>", "type": etype,
           "firstTimestamp": when, "lastTimestamp": when, "count": 1,
           "source": {"component": "modelplane-controller"}})


event("e-old", "TrainedModel", "m1", "Waiting", "2026-12-01T10:00:00Z", "Warning")
event("e-new", "TrainedModel", "m1", "Loaded", "2026-12-01T11:00:00Z")
event("e-isvc", "InferenceService", "sklearn", "Updated", "2026-12-01T10:30:00Z")

SA_KUBECONFIG = testenv("kubeconfig", DIR, "modelplane-system/modelplane-ui")
USER1_TOKEN = testenv("token", DIR, "user1")
ADMIN_TOKEN = testenv("token", DIR, "admin")
T = tempfile.mkdtemp(prefix="ui-kube-")
registry = Server(["registry", "-p", "0", "-d", os.path.join(T, "mr.db")], name="registry")
tap.cleanups.append(registry.stop)
# The catalog's hf previews go to the local stand-in for the Hugging Face hub (its wire format;
# the catalog's hf tests' server): HF_ENDPOINT
hub = subprocess.Popen([sys.executable, os.path.join(SRC, "tests/catalog/fake-hf-hub.py"),
                        os.path.join(SRC, "tests/fixtures/catalog/hf")], stdout=subprocess.PIPE,
                       text=True)
tap.cleanups.append(lambda: (hub.kill(), hub.wait()))
HUB_URL = "http://127.0.0.1:%s" % hub.stdout.readline().split()[1]
catalog = Server(["catalog", "-l", "127.0.0.1:0", "--catalogs-path",
                  os.path.join(SRC, "tests/fixtures/catalog/sources.yaml")],
                 env=dict(os.environ, HF_ENDPOINT=HUB_URL), name="catalog")
tap.cleanups.append(catalog.stop)

# Registry access as upstream grants it: get on the registry's Service in its namespace.
REG_NS = "mp-registry"
apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": REG_NS}})
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
       "metadata": {"name": "registry-user", "namespace": REG_NS},
       "rules": [{"apiGroups": [""], "resources": ["services"], "verbs": ["get"],
                  "resourceNames": ["model-registry-service", "model-catalog"]}]})


def bind(name, kind, subject):
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": REG_NS},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                       "name": "registry-user"},
           "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind,
                         "name": subject}]})


bind("registry-alice", "User", "alice")
bind("registry-ml-team", "Group", "ml-team")
bind("registry-user4", "User", "user4")

# A second registry, discovered as upstream discovers them: a Service in REG_NS labelled
# component=model-registry with an http-api port; the ui reaches it at its external address
# (upstream's federated mode), since a test control plane routes no cluster IP.
registry_b = Server(["registry", "-p", "0", "-d", os.path.join(T, "mr-b.db")], name="registry-b")
tap.cleanups.append(registry_b.stop)
for svc_name, labels, ann in (
        ("mr-b", {"component": "model-registry"},
         {"displayName": "Team B", "description": "team B's models",
          "modelregistry.kubeflow.org/external-address-rest": f"127.0.0.1:{registry_b.port}"}),
        ("not-a-registry", {"component": "something-else"}, {})):
    apply({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": svc_name, "namespace": REG_NS, "labels": labels,
                        "annotations": ann},
           "spec": {"ports": [{"name": "http-api", "port": 8080}]}})
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
       "metadata": {"name": "registry-user-mr-b", "namespace": REG_NS},
       "rules": [{"apiGroups": [""], "resources": ["services"], "verbs": ["get"],
                  "resourceNames": ["mr-b"]}]})
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
       "metadata": {"name": "registry-user-mr-b-frank", "namespace": REG_NS},
       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                   "name": "registry-user-mr-b"},
       "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "frank"}]})

UI_ARGS = ["--trusted-proxy", "127.0.0.1/32", "--groups-header", "kubeflow-groups",
           "--registry-url", registry.url, "--catalog-url", catalog.url,
           "--registry-service", f"{REG_NS}/model-registry-service",
           "--catalog-service", f"{REG_NS}/model-catalog", "--registry-external-address",
           "--transfer-job-image", "registry.example/modelplane:transfer-test"]
ui = Server(["ui", "-l", "127.0.0.1:0", "--kubeconfig", SA_KUBECONFIG] + UI_ARGS, name="ui-kube")
tap.cleanups.append(ui.stop)

U1 = {"kubeflow-userid": "user1"}
U2 = {"kubeflow-userid": "user2"}
A = "/api/v1/namespaces/team-a"


def get(path, headers, port=None):
    return call(port or ui.port, "GET", path, headers=headers)


def test_namespaces_only_those_the_user_may_read():
    st, _, raw, doc = get("/api/v1/namespaces", U1)
    expect(st == 200, f"{st} {raw[:300]!r}")
    names = [n["name"] for n in doc["data"]]
    expect(names == ["team-a"], f"user1 sees {names}")
    st, _, _, doc = get("/api/v1/namespaces", U2)
    expect(st == 200 and doc["data"] == [], f"user2 sees {doc}")
    # cluster-wide read of InferenceServices: every namespace, from one review
    st, _, _, doc = get("/api/v1/namespaces", {"kubeflow-userid": "user3"})
    names = [n["name"] for n in doc["data"]] if st == 200 else []
    expect(st == 200 and {"team-a", "team-b", "default"} <= set(names), f"user3 sees {st} {names}")


def test_forbidden_namespace_is_403_naming_it():
    expect_error(get("/api/v1/namespaces/team-b/inferenceservices", U1), 403, "kubernetes",
                 "user user1 may not list inferenceservices.serving.kserve.io in namespace team-b")
    expect_error(get("/api/v1/namespaces/team-b/inferenceservices/secret-isvc/trainedmodels", U1),
                 403, "kubernetes", "namespace team-b")
    expect_error(get("/api/v1/namespaces/team-b/events", U1), 403, "kubernetes",
                 "may not list events in namespace team-b")
    expect_error(get(A + "/inferenceservices", U2), 403, "kubernetes", "user user2")


def test_inferenceservices():
    st, h, raw, doc = get(A + "/inferenceservices", U1)
    expect(st == 200, f"{st} {raw[:300]!r}")
    items = doc["data"]["items"]
    expect([i["name"] for i in items] == ["sklearn"], items)
    p = items[0]["predictor"]
    expect(p["modelFormat"] == "sklearn" and p["memoryLimit"] == "1Gi", p)
    expect(doc["data"]["nextPageToken"] == "", doc["data"])
    st, _, _, doc = get(A + "/inferenceservices/sklearn", U1)
    expect(st == 200 and doc["data"]["namespace"] == "team-a", doc)
    expect_error(get(A + "/inferenceservices/missing", U1), 404, "kubernetes",
                 "missing not found in namespace team-a")
    expect_error(get(A + "/inferenceservices?pageSize=501", U1), 400, "ui", "pageSize")


def test_trainedmodels_every_condition_and_loaded():
    st, _, raw, doc = get(A + "/inferenceservices/sklearn/trainedmodels", U1)
    expect(st == 200, f"{st} {raw[:300]!r}")
    items = {t["name"]: t for t in doc["data"]["items"]}
    expect(sorted(items) == ["m1", "m2"], f"only sklearn's TrainedModels: {sorted(items)}")
    m1 = items["m1"]
    expect([c["type"] for c in m1["conditions"]] == [c["type"] for c in CONDITIONS],
           m1["conditions"])
    expect(m1["loaded"] == {"ready": 1, "total": 2}, m1["loaded"])
    expect(m1["ready"] is False and m1["url"] == "http://sklearn/m1", m1)
    expect(m1["memory"] == "256Mi" and m1["storageUri"] == "gs://bucket/m1", m1)
    expect(items["m2"]["loaded"] is None and items["m2"]["conditions"] == [], items["m2"])


def test_polling_with_etag():
    path = A + "/inferenceservices/sklearn/trainedmodels"
    st, h, _, _ = get(path, U1)
    etag = h["etag"]
    st, h2, raw, _ = get(path, {**U1, "If-None-Match": etag})
    expect(st == 304 and raw == b"", f"unchanged: {st}")
    kubectl("patch", "trainedmodel", "m2", "-n", "team-a", "--subresource=status",
            "--type=merge", "-p", json.dumps({"status": {"conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-01T12:00:00Z"}]}}))
    st, h3, _, doc = get(path, {**U1, "If-None-Match": etag})
    expect(st == 200 and h3["etag"] != etag, f"changed: {st}")
    m2 = [t for t in doc["data"]["items"] if t["name"] == "m2"][0]
    expect(m2["ready"] is True, m2)


def test_events_newest_first():
    st, _, raw, doc = get(A + "/events?kind=TrainedModel&name=m1", U1)
    expect(st == 200, f"{st} {raw[:300]!r}")
    ev = doc["data"]["items"]
    expect([e["reason"] for e in ev] == ["Loaded", "Waiting"], ev)
    expect(ev[1]["type"] == "Warning" and ev[0]["message"] == "Loaded <b>m1</b>", ev)
    st, _, _, doc = get(A + "/events?limit=1", U1)
    expect(len(doc["data"]["items"]) == 1 and doc["data"]["items"][0]["reason"] == "Loaded", doc)
    st, _, _, doc = get(A + "/events?kind=InferenceService", U1)
    expect([e["reason"] for e in doc["data"]["items"]] == ["Updated"], doc)
    expect_error(get(A + "/events?name=a,b", U1), 400, "ui")
    expect_error(get(A + "/events?limit=9999", U1), 400, "ui", "limit")


def test_bearer_passthrough():
    b = {"Authorization": "Bearer " + USER1_TOKEN}
    st, _, _, doc = get("/api/v1/user", b)
    expect(st == 200 and doc["data"]["userId"] == "user1" and doc["data"]["authMode"] == "bearer",
           doc)
    expect(doc["data"]["clusterAdmin"] is False, doc)
    st, _, _, doc = get(A + "/inferenceservices", b)
    expect(st == 200 and len(doc["data"]["items"]) == 1, doc)
    expect_error(get("/api/v1/namespaces/team-b/inferenceservices", b), 403, "kubernetes",
                 "team-b")
    st, _, _, doc = get("/api/v1/namespaces", b)
    expect([n["name"] for n in doc["data"]] == ["team-a"], doc)
    st, _, _, doc = get("/api/v1/user", {"Authorization": "Bearer " + ADMIN_TOKEN})
    expect(doc["data"]["userId"] == "admin" and doc["data"]["clusterAdmin"] is True, doc)
    st, _, _, doc = get("/api/v1/namespaces", {"Authorization": "Bearer " + ADMIN_TOKEN})
    names = [n["name"] for n in doc["data"]]
    expect("team-a" in names and "team-b" in names, names)


def test_bad_token_is_401():
    expect_error(get(A + "/inferenceservices", {"Authorization": "Bearer not-a-token"}), 401,
                 "kubernetes")
    expect_error(get("/api/v1/user", {"Authorization": "Bearer not-a-token"}), 401, "kubernetes")


def test_server_without_impersonate_right():
    nobody = testenv("kubeconfig", DIR, "nobody")
    u = Server(["ui", "-l", "127.0.0.1:0", "--kubeconfig", nobody, "--trusted-proxy",
                "127.0.0.1/32"], name="ui-nobody")
    try:
        expect_error(get(A + "/inferenceservices", U1, port=u.port), 500, "kubernetes",
                     "may not impersonate user1")
    finally:
        u.stop()


def test_unreachable_api_server_is_503():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    kc = tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False)
    kc.write(open(SA_KUBECONFIG).read().replace(
        [l for l in open(SA_KUBECONFIG).read().splitlines() if "server:" in l][0],
        f"    server: https://127.0.0.1:{port}"))
    kc.close()
    u = Server(["ui", "-l", "127.0.0.1:0", "--kubeconfig", kc.name, "--trusted-proxy",
                "127.0.0.1/32"], name="ui-down")
    try:
        expect_error(get(A + "/inferenceservices", U1, port=u.port), 503, "kubernetes",
                     f"https://127.0.0.1:{port}")
        st, _, _, _ = get("/healthcheck", {}, port=u.port)
        expect(st == 200, "the server itself is fine")
    finally:
        u.stop()
        os.unlink(kc.name)


MR = "/api/v1/model_registry/modelplane"
ALICE = {"kubeflow-userid": "alice"}
BOB = {"kubeflow-userid": "bob"}


def as_user(headers, method, path, body=None, port=None):
    h = dict(headers)
    if method != "GET":
        st, _, raw, doc = call(port or ui.port, "GET", "/api/v1/user", headers=headers)
        expect(st == 200, f"/api/v1/user: {st} {raw[:200]!r}")
        h["X-CSRF-Token"] = doc["data"]["csrfToken"]
    return call(port or ui.port, method, path, body=body, headers=h)


def registry_direct(method, path, body=None):
    return call(registry.port, method, "/api/model_registry/v1alpha3" + path, body=body)


def test_registry_only_for_users_who_may_get_its_service():
    st, _, raw, doc = as_user(ALICE, "POST", MR + "/registered_models",
                              {"data": {"name": "alice-model", "description": "alice's"}})
    expect(st == 201, f"alice registers: {st} {raw[:300]!r}")
    mid = doc["data"]["id"]
    st, _, raw, doc = as_user(ALICE, "POST", MR + f"/registered_models/{mid}/versions",
                              {"data": {"name": "v1", "registeredModelId": mid}})
    expect(st == 201, f"alice adds a version: {st} {raw[:300]!r}")
    vid = doc["data"]["id"]
    st, _, _, doc = as_user(ALICE, "GET", MR + "/registered_models")
    expect(st == 200 and doc["data"]["size"] == 1, doc)
    # bob: no Kubernetes rights at all. Every registry route, read or write, is refused in
    # words, and nothing he sends reaches the registry.
    routes = [("GET", "/registered_models", None),
              ("POST", "/registered_models", {"data": {"name": "bobs"}}),
              ("GET", f"/registered_models/{mid}", None),
              ("PATCH", f"/registered_models/{mid}", {"data": {"description": "bob was here"}}),
              ("GET", f"/registered_models/{mid}/versions", None),
              ("POST", f"/registered_models/{mid}/versions",
               {"data": {"name": "v2", "registeredModelId": mid}}),
              ("GET", f"/model_versions/{vid}", None),
              ("PATCH", f"/model_versions/{vid}", {"data": {"description": "bob"}}),
              ("GET", f"/model_versions/{vid}/artifacts", None),
              ("POST", f"/model_versions/{vid}/artifacts",
               {"data": {"name": "a", "artifactType": "model-artifact", "uri": "s3://b/k"}}),
              ("PATCH", "/model_artifact/1", {"data": {"description": "bob"}}),
              ("GET", "/inference_services", None)]
    for method, path, body in routes:
        err = expect_error(as_user(BOB, method, MR + path, body), 403, "kubernetes",
                           'user "bob" may not use the model registry "modelplane"')
        expect(f'get the Service "model-registry-service" in namespace "{REG_NS}"'
               in err["message"], f"{method} {path}: {err}")
    st, _, _, doc = registry_direct("GET", f"/registered_models/{mid}")
    expect(st == 200 and doc["description"] == "alice's", f"alice's model untouched: {doc}")
    st, _, _, doc = registry_direct("GET", "/registered_models")
    expect(doc["size"] == 1, f"bob created nothing: {doc}")
    st, _, _, doc = registry_direct("GET", f"/registered_models/{mid}/versions")
    expect(doc["size"] == 1, f"bob added no version: {doc}")


FRANK = {"kubeflow-userid": "frank"}
MRB = "/api/v1/model_registry/mr-b"


def registry_names(headers):
    st, _, raw, doc = as_user(headers, "GET", "/api/v1/model_registry")
    expect(st == 200, f"/model_registry: {st} {raw[:300]!r}")
    return {r["name"]: r for r in doc["data"]}


def test_registries_discovered_per_user():
    # frank may get the Service mr-b only (no list): a SelfSubjectRulesReview finds it
    regs = registry_names(FRANK)
    expect(sorted(regs) == ["modelplane", "mr-b"], regs)
    expect(regs["mr-b"] == {"name": "mr-b", "displayName": "Team B",
                            "description": "team B's models",
                            "serverAddress": f"http://127.0.0.1:{registry_b.port}"
                                             "/api/model_registry/v1alpha3",
                            "isHttps": False, "isAvailable": True}, regs["mr-b"])
    # alice may get the configured registry's Service, not mr-b's: the configured one only
    expect(sorted(registry_names(ALICE)) == ["modelplane"], "alice sees mr-b")
    expect(sorted(registry_names(BOB)) == ["modelplane"], "bob sees mr-b")
    # an admin may list Services: every labelled one, not the others
    st, _, raw, doc = get("/api/v1/model_registry", {"Authorization": "Bearer " + ADMIN_TOKEN})
    expect(st == 200 and sorted(r["name"] for r in doc["data"]) == ["modelplane", "mr-b"], raw)
    # available: upstream reads the Endpoints as the user, and a failed read counts as available
    apply({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "mr-b", "namespace": REG_NS},
           "subsets": [{"notReadyAddresses": [{"ip": "10.1.0.4"}],
                        "ports": [{"name": "http-api", "port": 8080}]}]})
    st, _, raw, doc = get("/api/v1/model_registry", {"Authorization": "Bearer " + ADMIN_TOKEN})
    expect([r["isAvailable"] for r in doc["data"] if r["name"] == "mr-b"] == [False], raw)
    expect(registry_names(FRANK)["mr-b"]["isAvailable"] is True, "frank may not read Endpoints")
    kubectl("-n", REG_NS, "delete", "endpoints", "mr-b")
    # upstream's namespace parameter: another namespace has none; a bad name is 400
    st, _, raw, doc = as_user(FRANK, "GET", "/api/v1/model_registry?namespace=team-a")
    expect(st == 200 and doc["data"] == [], raw)
    expect_error(as_user(FRANK, "GET", "/api/v1/model_registry?namespace=Bad_NS"), 400, "ui",
                 "not a namespace name")


def test_each_registry_routes_and_authorizes_alone():
    st, _, raw, doc = as_user(FRANK, "POST", MRB + "/registered_models",
                              {"data": {"name": "franks-model"}})
    expect(st == 201, f"frank registers in mr-b: {st} {raw[:300]!r}")
    mid = doc["data"]["id"]
    st, _, _, doc = call(registry_b.port, "GET", f"/api/model_registry/v1alpha3/registered_models/{mid}")
    expect(st == 200 and doc["name"] == "franks-model", f"in registry B: {doc}")
    st, _, _, doc = registry_direct("GET", "/registered_models?pageSize=1000")
    expect("franks-model" not in [m["name"] for m in doc["items"]], "it went to the other one")
    st, _, _, doc = as_user(FRANK, "GET", MRB + "/registered_models?namespace=" + REG_NS)
    expect(st == 200 and [m["name"] for m in doc["data"]["items"]] == ["franks-model"], doc)
    # frank may not use the configured registry; alice may not use mr-b: 403, nothing written
    expect_error(as_user(FRANK, "GET", MR + "/registered_models"), 403, "kubernetes",
                 'user "frank" may not use the model registry "modelplane"')
    for method, path, body in (("GET", "/registered_models", None),
                               ("POST", "/registered_models", {"data": {"name": "alices"}}),
                               ("PATCH", f"/registered_models/{mid}",
                                {"data": {"description": "alice was here"}})):
        err = expect_error(as_user(ALICE, method, MRB + path, body), 403, "kubernetes",
                           'user "alice" may not use the model registry "mr-b"')
        expect(f'"mr-b" in namespace "{REG_NS}"' in err["message"], err)
    st, _, _, doc = call(registry_b.port, "GET", "/api/model_registry/v1alpha3/registered_models")
    expect(doc["size"] == 1 and not doc["items"][0].get("description"),
           f"alice wrote nothing to B: {doc}")
    # unknown names: 403 before anything is read for a user without the right, 404 for an admin
    admin = {"Authorization": "Bearer " + ADMIN_TOKEN}
    expect_error(as_user(BOB, "GET", "/api/v1/model_registry/nope/registered_models"), 403,
                 "kubernetes", 'may not use the model registry "nope"')
    expect_error(get("/api/v1/model_registry/nope/registered_models", admin), 404, "ui",
                 "no model registry named 'nope'")
    expect_error(get("/api/v1/model_registry/not-a-registry/registered_models", admin), 404,
                 "ui", "component=model-registry")
    st, _, _, _ = get(MRB + "/registered_models", admin)
    expect(st == 200, f"admin's token on mr-b: {st}")


def test_deploy_from_another_registry():
    bind_in("team-a", "viewer-frank", "viewer", "frank")
    bind_in("team-a", "deployer-frank", "deployer", "frank")
    b = lambda m, p, body=None: call(registry_b.port, m, "/api/model_registry/v1alpha3" + p,
                                     body=body)
    st, _, raw, m = b("POST", "/registered_models", {"name": "b-model"})
    expect(st == 201, raw)
    st, _, raw, v = b("POST", f"/registered_models/{m['id']}/versions",
                      {"name": "v1", "registeredModelId": m["id"]})
    expect(st == 201, raw)
    st, _, raw, _ = b("POST", f"/model_versions/{v['id']}/artifacts",
                      {"artifactType": "model-artifact", "name": "model",
                       "uri": "s3://bucket/b", "modelFormatName": "sklearn"})
    expect(st == 201, raw)
    body = {"data": {"name": "b-iris", "inferenceService": "sklearn", "modelVersionId": v["id"],
                     "memory": "64Mi", "modelRegistry": "mr-b"}}
    # alice may create TrainedModels in team-a but not use mr-b: nothing is created
    expect_error(as_user(ALICE, "POST", "/api/v1/namespaces/team-a/trainedmodels", body), 403,
                 "kubernetes", 'may not use the model registry "mr-b"')
    expect(not tm_exists("b-iris"), "alice's refused deploy created it")
    st, _, raw, _ = as_user(FRANK, "POST", "/api/v1/namespaces/team-a/trainedmodels", body)
    expect(st == 201, f"frank deploys from mr-b: {st} {raw[:300]!r}")
    tm = json.loads(kubectl("-n", "team-a", "get", "trainedmodel", "b-iris", "-o", "json"))
    labels = tm["metadata"]["labels"]
    expect(tm["spec"]["model"]["storageUri"] == "s3://bucket/b" and
           labels.get("modelregistry.kubeflow.org/name") == "mr-b" and
           labels.get("modelregistry.kubeflow.org/namespace") == REG_NS, tm)
    q = f"/api/v1/deployments?modelVersionId={v['id']}"
    st, _, _, doc = as_user(FRANK, "GET", q + "&modelRegistry=mr-b")
    expect([t["name"] for t in doc["data"]["trainedModels"]] == ["b-iris"], doc)
    st, _, _, doc = as_user(FRANK, "GET", q)
    expect("b-iris" not in [t["name"] for t in doc["data"]["trainedModels"]],
           f"the configured registry's deployments hold mr-b's: {doc}")
    kubectl("-n", "team-a", "delete", "trainedmodel", "b-iris")


# ---- the settings routes, as the user (docs/ui.md, "Settings") ----

RB_ADMIN = {"kubeflow-userid": "rb-admin"}
GINA = {"kubeflow-userid": "gina"}
S = "/api/v1/settings"


def settings_setup():
    """rb-admin administers REG_NS (reads its Services, manages its RoleBindings) and may list
    OpenShift groups; bob may do nothing."""
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "registry-admin", "namespace": REG_NS},
           "rules": [{"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list"]},
                     {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"],
                      "verbs": ["get", "list", "create", "update", "delete"]}]})
    bind_in(REG_NS, "registry-admin-rb-admin", "registry-admin", "rb-admin")
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": "mp-ui-test-group-reader"},
           "rules": [{"apiGroups": ["user.openshift.io"], "resources": ["groups"],
                      "verbs": ["list"]}]})
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": "mp-ui-test-group-reader-rb-admin"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                       "name": "mp-ui-test-group-reader"},
           "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                         "name": "rb-admin"}]})


def test_settings_groups():
    # Kubernetes keeps no groups: without OpenShift's API the list is empty, as upstream's
    st, _, raw, doc = as_user(RB_ADMIN, "GET", S + "/groups")
    expect(st == 200 and doc["data"] == [], raw)
    # with it (a CRD of OpenShift's Group here), the groups the user may list
    apply({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "groups.user.openshift.io"},
           "spec": {"group": "user.openshift.io", "scope": "Cluster",
                    "names": {"plural": "groups", "singular": "group", "kind": "Group"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {
                                      "type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True}}}]}})
    wait_until(lambda: subprocess.run([TESTENV, "kubectl", DIR, "get", "groups.user.openshift.io"],
                                      capture_output=True).returncode == 0,
               "the Group CRD to be served")
    apply({"apiVersion": "user.openshift.io/v1", "kind": "Group",
           "metadata": {"name": "b-team"}, "users": ["gina", "frank"]})
    st, _, raw, doc = as_user(RB_ADMIN, "GET", S + "/groups")
    expect(st == 200, raw)
    expect([(g["metadata"]["name"], g["users"]) for g in doc["data"]] ==
           [("b-team", ["gina", "frank"])], doc)
    expect_error(as_user(BOB, "GET", S + "/groups"), 403, "kubernetes", "bob")


def registry_bindings():
    out = kubectl("-n", REG_NS, "get", "rolebindings", "-l",
                  "app.kubernetes.io/component=model-registry", "-o", "json")
    return sorted(i["metadata"]["name"] for i in json.loads(out)["items"])


def test_settings_registries():
    settings_setup()
    st, _, raw, doc = as_user(RB_ADMIN, "GET", S + "/model_registry")
    expect(st == 200, raw)
    expect([k["metadata"]["name"] for k in doc["data"]] == ["mr-b"], doc)
    expect(doc["data"][0]["spec"]["rest"]["port"] == 8080, doc)
    st, _, raw, doc = as_user(RB_ADMIN, "GET", S + "/model_registry/mr-b")
    expect(st == 200 and doc["data"]["modelRegistry"]["metadata"]["namespace"] == REG_NS, raw)
    expect_error(as_user(RB_ADMIN, "GET", S + "/model_registry/not-a-registry"), 404, "ui",
                 "no model registry named 'not-a-registry'")
    expect_error(as_user(BOB, "GET", S + "/model_registry"), 403, "kubernetes",
                 f"user bob may not list services in namespace {REG_NS}")
    expect_error(as_user(BOB, "GET", S + "/model_registry/mr-b"), 403, "kubernetes", "bob")


def test_settings_role_bindings_grant_and_revoke():
    grant = {"data": {"metadata": {"name": "mr-b-gina",
                                   "labels": {"app.kubernetes.io/name": "mr-b"}},
                      "subjects": [{"kind": "User", "name": "gina",
                                    "apiGroup": "rbac.authorization.k8s.io"}],
                      "roleRef": {"kind": "Role", "name": "registry-user-mr-b",
                                  "apiGroup": "rbac.authorization.k8s.io"}}}
    st, _, raw, doc = as_user(RB_ADMIN, "GET", S + "/role_bindings")
    expect(st == 200 and doc["data"]["items"] == [], raw)
    expect_error(as_user(GINA, "GET", MRB + "/registered_models"), 403, "kubernetes", "gina")
    # bob may not: 403, nothing written
    expect_error(as_user(BOB, "POST", S + "/role_bindings", grant), 403, "kubernetes",
                 f"user bob may not create rolebindings.rbac.authorization.k8s.io mr-b-gina "
                 f"in namespace {REG_NS}")
    expect_error(as_user(BOB, "GET", S + "/role_bindings"), 403, "kubernetes", "bob")
    expect(registry_bindings() == [], registry_bindings())
    # a binding to another role is refused before anything is sent
    bad = json.loads(json.dumps(grant))
    bad["data"]["roleRef"] = {"kind": "ClusterRole", "name": "cluster-admin"}
    expect_error(as_user(RB_ADMIN, "POST", S + "/role_bindings", bad), 400, "ui",
                 "registry-user-mr-b")
    expect(registry_bindings() == [], registry_bindings())
    # the administrator grants gina the use of mr-b: as upstream's frontend builds it
    st, _, raw, doc = as_user(RB_ADMIN, "POST", S + "/role_bindings", grant)
    expect(st == 201, f"rb-admin grants: {st} {raw[:300]!r}")
    expect(doc["data"]["roleRef"]["name"] == "registry-user-mr-b" and
           doc["data"]["metadata"]["labels"]["app.kubernetes.io/component"] == "model-registry",
           doc)
    wait_until(lambda: as_user(GINA, "GET", MRB + "/registered_models")[0] == 200,
               "gina's new RoleBinding to count")
    expect_error(as_user(RB_ADMIN, "POST", S + "/role_bindings", grant), 409, "kubernetes",
                 "mr-b-gina already exists")
    # a group, without a name: generateName
    team = {"data": {"metadata": {"labels": {"app.kubernetes.io/name": "mr-b"}},
                     "subjects": [{"kind": "Group", "name": "b-team"}]}}
    st, _, raw, doc = as_user(RB_ADMIN, "POST", S + "/role_bindings", team)
    expect(st == 201 and doc["data"]["metadata"]["name"].startswith("mr-b-permissions-"), raw)
    team_rb = doc["data"]["metadata"]["name"]
    st, _, raw, doc = as_user(RB_ADMIN, "GET", S + "/role_bindings")
    expect(sorted(i["metadata"]["name"] for i in doc["data"]["items"]) ==
           sorted(["mr-b-gina", team_rb]), raw)
    # PATCH: the subjects replaced as the user; a stale resourceVersion is 409, roleRef stays
    rv = kubectl("-n", REG_NS, "get", "rolebinding", "mr-b-gina", "-o",
                 "jsonpath={.metadata.resourceVersion}")
    both = {"data": {"subjects": [{"kind": "User", "name": "gina"},
                                  {"kind": "Group", "name": "g-team"}]}}
    expect_error(as_user(BOB, "PATCH", S + "/role_bindings/mr-b-gina", both), 403, "kubernetes",
                 "bob")
    expect_error(as_user(RB_ADMIN, "PATCH", S + "/role_bindings/mr-b-gina",
                         {"data": {"roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
                                   "subjects": both["data"]["subjects"]}}),
                 400, "ui", "roleRef cannot change")
    expect_error(as_user(RB_ADMIN, "PATCH", S + "/role_bindings/registry-alice", both), 404, "ui",
                 "no model registry RoleBinding named registry-alice")
    st, _, raw, doc = as_user(RB_ADMIN, "PATCH", S + "/role_bindings/mr-b-gina", both)
    expect(st == 200 and [x["name"] for x in doc["data"]["subjects"]] == ["gina", "g-team"],
           f"patch: {st} {raw[:300]!r}")
    got = json.loads(kubectl("-n", REG_NS, "get", "rolebinding", "mr-b-gina", "-o", "json"))
    expect([x["name"] for x in got["subjects"]] == ["gina", "g-team"] and
           got["roleRef"]["name"] == "registry-user-mr-b", got)
    stale = {"data": {"metadata": {"resourceVersion": rv}, "subjects": [{"kind": "User",
                                                                         "name": "gina"}]}}
    expect_error(as_user(RB_ADMIN, "PATCH", S + "/role_bindings/mr-b-gina", stale), 409,
                 "kubernetes", "changed since it was read")
    # delete: bob may not; a RoleBinding that is not a registry's is not this route's
    expect_error(as_user(BOB, "DELETE", S + "/role_bindings/mr-b-gina"), 403, "kubernetes",
                 "bob")
    expect("mr-b-gina" in registry_bindings(), "bob's refused delete removed it")
    expect_error(as_user(RB_ADMIN, "DELETE", S + "/role_bindings/registry-alice"), 404, "ui",
                 "no model registry RoleBinding named registry-alice")
    kubectl("-n", REG_NS, "get", "rolebinding", "registry-alice")
    st, _, raw, _ = as_user(RB_ADMIN, "DELETE", S + "/role_bindings/mr-b-gina")
    expect(st == 204, f"delete: {st} {raw[:200]!r}")
    expect(registry_bindings() == [team_rb], registry_bindings())
    wait_until(lambda: as_user(GINA, "GET", MRB + "/registered_models")[0] == 403,
               "gina's revoked RoleBinding to count")
    st, _, _, _ = as_user(RB_ADMIN, "DELETE", S + f"/role_bindings/{team_rb}")
    expect(st == 204, st)


# ---- registries made by the console (docs/ui.md, "Registries made by the console") ----

REG_ADMIN = {"kubeflow-userid": "reg-admin"}
HALF_ADMIN = {"kubeflow-userid": "half-admin"}
HANK = {"kubeflow-userid": "hank"}
MR_C = {"data": {"modelRegistry": {
    "apiVersion": "modelregistry.kubeflow.io/v1alpha1", "kind": "ModelRegistry",
    "metadata": {"name": "mr-c", "namespace": REG_NS,
                 "annotations": {"displayName": "Team C", "description": "C's models"}},
    "spec": {"rest": {}, "grpc": {}}}}}


def registry_objects(name, pvc=False):
    out = {}
    kinds = [("deployment", name), ("service", name), ("role", f"registry-user-{name}")]
    for kind, obj in kinds + ([("pvc", f"{name}-data")] if pvc else []):
        r = subprocess.run([TESTENV, "kubectl", DIR, "-n", REG_NS, "get", kind, obj, "-o", "json"],
                           capture_output=True, text=True)
        out[kind] = json.loads(r.stdout) if r.returncode == 0 else None
    return out


def with_body(body, **spec):
    b = json.loads(json.dumps(body))
    b["data"]["modelRegistry"]["spec"].update(spec)
    return b


def registry_admins():
    """reg-admin holds the shipped ClusterRole modelplane-registry-admin in REG_NS; half-admin
    may read Services and Roles and write Deployments, nothing else; bob nothing."""
    bind_in(REG_NS, "reg-admin", "modelplane-registry-admin", "reg-admin", kind="ClusterRole")
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "half-admin", "namespace": REG_NS},
           "rules": [{"apiGroups": [""], "resources": ["services"], "verbs": ["get"]},
                     {"apiGroups": ["apps"], "resources": ["deployments"],
                      "verbs": ["get", "create", "delete"]},
                     {"apiGroups": [""], "resources": ["persistentvolumeclaims"],
                      "verbs": ["get"]},
                     {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
                      "verbs": ["get"]}]})
    bind_in(REG_NS, "half-admin", "half-admin", "half-admin")


def test_settings_registry_refusals_write_nothing():
    registry_admins()
    none = {"deployment": None, "service": None, "role": None}
    expect_error(as_user(BOB, "POST", S + "/model_registry", MR_C), 403, "kubernetes",
                 f"user bob may not get deployments.apps mr-c in namespace {REG_NS}")
    expect(registry_objects("mr-c", pvc=True) == dict(none, pvc=None),
           "bob's refused create wrote something")
    # half-admin's Deployment is written, the Service refused: the Deployment is removed
    expect_error(as_user(HALF_ADMIN, "POST", S + "/model_registry", MR_C), 403, "kubernetes",
                 f"user half-admin may not create services mr-c in namespace {REG_NS}")
    wait_until(lambda: registry_objects("mr-c", pvc=True) == dict(none, pvc=None),
               "half-admin's Deployment to be removed")
    # bad input: 400 or 422 naming the field, before anything is sent
    bad = json.loads(json.dumps(MR_C))
    bad["data"]["modelRegistry"]["metadata"]["name"] = "Team_C"
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry", bad), 400, "ui",
                 "metadata.name must be a Service's name")
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry",
                         with_body(MR_C, mysql={"host": "db", "database": "mr"})), 422, "ui",
                 "spec.mysql is not supported")
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry",
                         with_body(MR_C, postgres={"host": "db", "database": "mr",
                                                   "username": "u", "port": 0})), 400, "ui",
                 "spec.postgres.port must be 1 to 65535")
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry",
                         with_body(MR_C, postgres={"database": "mr", "username": "u"})), 422,
                 "ui", "spec.postgres.host is required")
    pw = json.loads(json.dumps(MR_C))
    pw["data"]["databasePassword"] = "secret"
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry", pw), 422, "ui",
                 "databasePassword is not kept")
    expect(registry_objects("mr-c") == none, "a refused create wrote something")
    # a name clash with any of its objects is 409 before anything is written
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "registry-user-mr-d", "namespace": REG_NS},
           "rules": [{"apiGroups": [""], "resources": ["services"], "verbs": ["get"],
                      "resourceNames": ["mr-d"]}]})
    mr_d = json.loads(json.dumps(MR_C))
    mr_d["data"]["modelRegistry"]["metadata"]["name"] = "mr-d"
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry", mr_d), 409, "kubernetes",
                 f"a roles.rbac.authorization.k8s.io named registry-user-mr-d already exists "
                 f"in namespace {REG_NS}")
    expect(registry_objects("mr-d")["deployment"] is None and
           registry_objects("mr-d")["service"] is None, "the clash wrote something")
    kubectl("-n", REG_NS, "delete", "role", "registry-user-mr-d")
    # a registry the console did not make is not the console's to change or delete
    expect_error(as_user(REG_ADMIN, "PATCH", S + "/model_registry/mr-b",
                         {"data": {"modelRegistry": {"metadata": {"annotations": {
                             "displayName": "x"}}}}}), 409, "ui", "was not made by this console")
    expect_error(as_user(REG_ADMIN, "DELETE", S + "/model_registry/mr-b"), 409, "ui",
                 "was not made by this console")
    kubectl("-n", REG_NS, "get", "service", "mr-b")
    expect_error(as_user(REG_ADMIN, "DELETE", S + "/model_registry/nope"), 404, "ui",
                 "no model registry named 'nope'")


def test_settings_registry_create_patch_delete():
    registry_admins()
    st, _, raw, doc = as_user(REG_ADMIN, "POST", S + "/model_registry", MR_C)
    expect(st == 201, f"create: {st} {raw[:300]!r}")
    expect(doc["data"]["metadata"]["name"] == "mr-c" and
           doc["data"]["metadata"]["annotations"] == {"displayName": "Team C",
                                                      "description": "C's models"} and
           doc["data"]["spec"]["rest"]["port"] == 8080 and
           "postgres" not in doc["data"]["spec"], doc)
    o = registry_objects("mr-c", pvc=True)
    # the Deployment: modelplane registry on SQLite on its claim, as deploy/overlays/registry-sqlite
    dep = o["deployment"]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    expect(dep["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "modelplane-ui", dep)
    expect(dep["spec"]["replicas"] == 1 and dep["spec"]["strategy"]["type"] == "Recreate", dep)
    expect(dep["spec"]["selector"]["matchLabels"] == {"app": "mr-c",
                                                      "component": "model-registry"}, dep)
    expect(c["image"] == "registry.example/modelplane:transfer-test", c)
    expect(c["args"] == ["registry", "--hostname=0.0.0.0", "--database=/data/model-registry.db"], c)
    expect(c["ports"][0]["name"] == "http-api" and c["ports"][0]["containerPort"] == 8080, c)
    expect(c["readinessProbe"]["httpGet"]["path"] == "/readyz/health", c)
    expect(c["volumeMounts"] == [{"name": "data", "mountPath": "/data"}], c)
    expect(pod["volumes"] == [{"name": "data",
                                "persistentVolumeClaim": {"claimName": "mr-c-data"}}], pod)
    pvc = o["pvc"]
    expect(pvc["spec"]["accessModes"] == ["ReadWriteOnce"] and
           pvc["spec"]["resources"]["requests"]["storage"] == "1Gi" and
           pvc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "modelplane-ui", pvc)
    expect(c["securityContext"]["readOnlyRootFilesystem"] is True and
           pod["securityContext"]["runAsNonRoot"] is True and
           pod["automountServiceAccountToken"] is False, pod)
    expect(not c.get("env"), c)
    # the Service the console discovers, and the Role its access check uses
    svc = o["service"]
    expect(svc["metadata"]["labels"]["component"] == "model-registry" and
           svc["metadata"]["annotations"] == {"displayName": "Team C",
                                              "description": "C's models"}, svc)
    expect([(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [("http-api", 8080)] and
           svc["spec"]["selector"] == {"app": "mr-c", "component": "model-registry"}, svc)
    expect(o["role"]["rules"] == [{"apiGroups": [""], "resources": ["services"],
                                   "resourceNames": ["mr-c"], "verbs": ["get"]}], o["role"])
    expect_error(as_user(REG_ADMIN, "POST", S + "/model_registry", MR_C), 409, "kubernetes",
                 "already exists")
    st, _, raw, doc = as_user(REG_ADMIN, "GET", S + "/model_registry")
    expect(sorted(k["metadata"]["name"] for k in doc["data"]) == ["mr-b", "mr-c"], raw)
    # hank is granted its use through the role-binding route: the registry list shows it
    expect("mr-c" not in registry_names(HANK), "hank sees mr-c before the grant")
    st, _, raw, _ = as_user(REG_ADMIN, "POST", S + "/role_bindings", {"data": {
        "metadata": {"name": "mr-c-hank", "labels": {"app.kubernetes.io/name": "mr-c"}},
        "subjects": [{"kind": "User", "name": "hank"}]}})
    expect(st == 201, f"grant: {st} {raw[:300]!r}")
    wait_until(lambda: "mr-c" in registry_names(HANK), "hank to see mr-c")
    expect(registry_names(HANK)["mr-c"]["displayName"] == "Team C", registry_names(HANK))
    expect("mr-c" not in registry_names(BOB), "bob sees mr-c")
    # PATCH: the annotations and the database, as the user
    patch = {"data": {"modelRegistry": {
        "metadata": {"annotations": {"displayName": "Team C2", "description": ""}},
        "spec": {"postgres": {"host": "db.example", "port": 5433, "database": "mr",
                              "username": "mr_user", "sslMode": "require",
                              "passwordSecret": {"name": "mr-c-db", "key": "pw"}}}}}}
    expect_error(as_user(BOB, "PATCH", S + "/model_registry/mr-c", patch), 403, "kubernetes",
                 "bob")
    # half-admin may read the registry but not update its Service: asked first, nothing changes
    expect_error(as_user(HALF_ADMIN, "PATCH", S + "/model_registry/mr-c", patch), 403,
                 "kubernetes", f"user half-admin may not update services in namespace {REG_NS}")
    expect(registry_objects("mr-c")["deployment"]["spec"]["template"]["spec"]["containers"][0]
           ["args"][2] == "--database=/data/model-registry.db", "half-admin's PATCH wrote")
    expect_error(as_user(REG_ADMIN, "PATCH", S + "/model_registry/mr-c",
                         {"data": {"spec": {"postgres": {"host": "db", "database": "d;x",
                                                         "username": "u"}}}}),
                 400, "ui", "spec.postgres.database")
    st, _, raw, doc = as_user(REG_ADMIN, "PATCH", S + "/model_registry/mr-c", patch)
    expect(st == 200 and doc["data"]["metadata"]["annotations"] == {"displayName": "Team C2"},
           f"patch: {st} {raw[:300]!r}")
    o = registry_objects("mr-c")
    c = o["deployment"]["spec"]["template"]["spec"]["containers"][0]
    expect(c["args"][2] == "--database=host=db.example port=5433 dbname=mr user=mr_user "
                          "sslmode=require", c)
    expect(c["env"] == [{"name": "PGPASSWORD", "valueFrom": {"secretKeyRef": {
        "name": "mr-c-db", "key": "pw"}}}], c)
    expect(not o["deployment"]["spec"]["template"]["spec"].get("volumes") and
           o["deployment"]["spec"]["strategy"]["type"] == "RollingUpdate", o["deployment"])
    expect(o["service"]["metadata"]["annotations"] == {"displayName": "Team C2"}, o["service"])
    # GET shows the database from the Deployment, the password's Secret by name only
    pg = {"host": "db.example", "port": 5433, "database": "mr", "username": "mr_user",
          "sslMode": "require", "passwordSecret": {"name": "mr-c-db", "key": "pw"}}
    expect(doc["data"]["spec"]["postgres"] == pg, doc)
    st, _, raw, doc = as_user(REG_ADMIN, "GET", S + "/model_registry/mr-c")
    expect(st == 200 and doc["data"]["modelRegistry"]["spec"]["postgres"] == pg, raw)
    # DELETE: bob may not (nothing goes); the admin's removes the objects and the RoleBinding
    expect_error(as_user(BOB, "DELETE", S + "/model_registry/mr-c"), 403, "kubernetes", "bob")
    expect(all(registry_objects("mr-c").values()), "bob's refused delete removed something")
    # half-admin may delete the Deployment, not the RoleBindings: asked first, nothing goes
    expect_error(as_user(HALF_ADMIN, "DELETE", S + "/model_registry/mr-c"), 403, "kubernetes",
                 f"user half-admin may not delete rolebindings.rbac.authorization.k8s.io in "
                 f"namespace {REG_NS} (a registry is deleted with its Deployment")
    expect(all(registry_objects("mr-c").values()) and "mr-c-hank" in registry_bindings(),
           "half-admin's refused delete removed something")
    st, _, raw, _ = as_user(REG_ADMIN, "DELETE", S + "/model_registry/mr-c")
    expect(st == 204, f"delete: {st} {raw[:300]!r}")
    expect(registry_objects("mr-c") == {"deployment": None, "service": None, "role": None},
           registry_objects("mr-c"))
    left = registry_objects("mr-c", pvc=True)["pvc"]  # gone, or held by pvc-protection
    expect(left is None or left["metadata"].get("deletionTimestamp"), left)
    expect("mr-c-hank" not in registry_bindings(), registry_bindings())
    wait_until(lambda: "mr-c" not in registry_names(HANK), "mr-c to leave hank's list")
    expect_error(as_user(REG_ADMIN, "GET", S + "/model_registry/mr-c"), 404, "ui", "mr-c")


def test_settings_registry_postgres_then_sqlite():
    """A registry made on PostgreSQL has no claim; moved to SQLite, its claim is made."""
    registry_admins()
    body = with_body(MR_C, postgres={"host": "db", "database": "mr", "username": "u"})
    body["data"]["modelRegistry"]["metadata"]["name"] = "mr-e"
    st, _, raw, doc = as_user(REG_ADMIN, "POST", S + "/model_registry", body)
    expect(st == 201 and doc["data"]["spec"]["postgres"]["host"] == "db", raw)
    expect(registry_objects("mr-e", pvc=True)["pvc"] is None, "a claim for PostgreSQL")
    st, _, raw, doc = as_user(REG_ADMIN, "PATCH", S + "/model_registry/mr-e",
                              {"data": {"modelRegistry": {"spec": {"postgres": None}}}})
    expect(st == 200 and "postgres" not in doc["data"]["spec"], raw)
    o = registry_objects("mr-e", pvc=True)
    expect(o["pvc"] and o["deployment"]["spec"]["template"]["spec"]["volumes"] ==
           [{"name": "data", "persistentVolumeClaim": {"claimName": "mr-e-data"}}], o)
    expect(o["deployment"]["spec"]["template"]["spec"]["containers"][0]["args"][2] ==
           "--database=/data/model-registry.db", o["deployment"])
    st, _, raw, _ = as_user(REG_ADMIN, "DELETE", S + "/model_registry/mr-e")
    expect(st == 204, raw)


def test_settings_certificates():
    bind_in(REG_NS, "reg-admin", "modelplane-registry-admin", "reg-admin", kind="ClusterRole")
    pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
    apply({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "db-ca", "namespace": REG_NS},
           "data": {"ca.crt": pem, "README": "not a certificate"}})
    apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-tls", "namespace": REG_NS},
           "type": "Opaque", "stringData": {"root.pem": pem, "password": "hunter2"}})
    st, _, raw, doc = as_user(REG_ADMIN, "GET", S + "/certificates")
    expect(st == 200, raw)
    expect({"name": "db-ca", "keys": ["ca.crt"]} in doc["data"]["configMaps"], doc)
    expect({"name": "db-tls", "keys": ["root.pem"]} in doc["data"]["secrets"], doc)
    expect(b"hunter2" not in raw and b"MIIB" not in raw, "a value in the answer")
    expect_error(as_user(BOB, "GET", S + "/certificates"), 403, "kubernetes",
                 f"user bob may not list configmaps in namespace {REG_NS}")
    kubectl("-n", REG_NS, "delete", "configmap", "db-ca")
    kubectl("-n", REG_NS, "delete", "secret", "db-tls")


def test_catalog_only_for_users_who_may_get_its_service():
    for path in ("/api/v1/model_catalog/sources", "/api/v1/model_catalog/models",
                 "/api/v1/model_catalog/models/filter_options", "/api/v1/model_catalog/labels",
                 "/api/v1/mcp_catalog/mcp_servers", "/api/v1/mcp_catalog/mcp_servers_filter_options"):
        st, _, raw, _ = as_user(ALICE, "GET", path)
        expect(st == 200, f"alice {path}: {st} {raw[:200]!r}")
        expect_error(as_user(BOB, "GET", path), 403, "kubernetes",
                     'user "bob" may not use the model catalog')


def test_registry_access_by_group_and_by_token():
    carol = {"kubeflow-userid": "carol"}
    expect_error(as_user(carol, "GET", MR + "/registered_models"), 403, "kubernetes", "carol")
    st, _, _, _ = as_user({**carol, "kubeflow-groups": "ml-team"}, "GET", MR + "/registered_models")
    expect(st == 200, f"carol through group ml-team: {st}")
    # bearer tokens review themselves (SelfSubjectAccessReview)
    expect_error(get(MR + "/registered_models",
                     {"Authorization": "Bearer " + USER1_TOKEN}), 403, "kubernetes",
                 'user "user1" may not use the model registry')
    st, _, _, _ = get(MR + "/registered_models",
                      {"Authorization": "Bearer " + testenv("token", DIR, "user4")})
    expect(st == 200, f"user4's token (bound): {st}")
    st, _, _, _ = get(MR + "/registered_models", {"Authorization": "Bearer " + ADMIN_TOKEN})
    expect(st == 200, f"admin's token: {st}")
    expect_error(get(MR + "/registered_models", {"Authorization": "Bearer not-a-token"}), 401,
                 "kubernetes")


def test_grant_and_revoke_take_effect():
    dave = {"kubeflow-userid": "dave"}
    expect_error(as_user(dave, "GET", MR + "/registered_models"), 403, "kubernetes", "dave")
    bind("registry-dave", "User", "dave")
    wait_until(lambda: as_user(dave, "GET", MR + "/registered_models")[0] == 200,
               "dave's new RoleBinding to count")
    kubectl("delete", "rolebinding", "registry-dave", "-n", REG_NS)
    wait_until(lambda: as_user(dave, "GET", MR + "/registered_models")[0] == 403,
               "dave's revoked RoleBinding to count")


def test_server_without_subjectaccessreview_right():
    nobody = testenv("kubeconfig", DIR, "nobody")
    u = Server(["ui", "-l", "127.0.0.1:0", "--kubeconfig", nobody] + UI_ARGS, name="ui-nosar")
    try:
        expect_error(get(MR + "/registered_models", ALICE, port=u.port), 500, "ui",
                     "deploy/base/ui/rbac.yaml")
    finally:
        u.stop()


# ---- deploying a registered version (docs/ui.md, "Deploying a registered version") ----

def bind_in(ns, name, role, user, kind="Role"):
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": name, "namespace": ns},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
           "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


# alice may read team-a and create TrainedModels there; erin may only read it. Both may use the
# registry.
apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
       "metadata": {"name": "deployer", "namespace": "team-a"},
       "rules": [{"apiGroups": ["serving.kserve.io"], "resources": ["trainedmodels"],
                  "verbs": ["create"]}]})
bind_in("team-a", "viewer-alice", "viewer", "alice")
bind_in("team-a", "deployer-alice", "deployer", "alice")
bind_in("team-a", "viewer-erin", "viewer", "erin")
bind("registry-erin", "User", "erin")
ERIN = {"kubeflow-userid": "erin"}


def registered_version(name, uri="s3://bucket/iris", fmt="sklearn"):
    st, _, raw, m = registry_direct("POST", "/registered_models", {"name": name})
    expect(st == 201, raw)
    st, _, raw, v = registry_direct("POST", f"/registered_models/{m['id']}/versions",
                                    {"name": "v1", "registeredModelId": m["id"]})
    expect(st == 201, raw)
    st, _, raw, _ = registry_direct("POST", f"/model_versions/{v['id']}/artifacts",
                                    {"artifactType": "model-artifact", "name": "model",
                                     "uri": uri, "modelFormatName": fmt})
    expect(st == 201, raw)
    return m["id"], v["id"]


def deploy(headers, name, vid, isvc_name="sklearn", memory="128Mi", ns="team-a"):
    return as_user(headers, "POST", f"/api/v1/namespaces/{ns}/trainedmodels",
                   {"data": {"name": name, "inferenceService": isvc_name,
                             "modelVersionId": vid, "memory": memory}})


def tm_exists(name, ns="team-a"):
    r = subprocess.run([TESTENV, "kubectl", DIR, "-n", ns, "get", "trainedmodel", name],
                       capture_output=True, text=True)
    return r.returncode == 0


def test_deploy_as_the_user_rbac_decides():
    # a single-model InferenceService takes no TrainedModel
    apply(isvc("team-a", "single", "1Gi") | {"spec": {"predictor": {"sklearn": {
        "storageUri": "gs://bucket/one", "resources": {"limits": {"memory": "1Gi"}}}}}})
    mid, vid = registered_version("deploy-me")
    # erin may read team-a but not create TrainedModels: 403 in words, nothing created
    expect_error(deploy(ERIN, "erin-iris", vid), 403, "kubernetes",
                 "user erin may not create trainedmodels.serving.kserve.io in namespace team-a")
    expect(not tm_exists("erin-iris"), "erin's TrainedModel was created")
    # alice may: created as she asked, from the version's artifact, with the link labels
    st, _, raw, doc = deploy(ALICE, "iris-v1", vid)
    expect(st == 201, f"alice deploys: {st} {raw[:400]!r}")
    expect(doc["data"]["name"] == "iris-v1" and doc["data"]["inferenceService"] == "sklearn",
           doc)
    tm = json.loads(kubectl("-n", "team-a", "get", "trainedmodel", "iris-v1", "-o", "json"))
    expect(tm["spec"]["model"] == {"storageUri": "s3://bucket/iris", "framework": "sklearn",
                                   "memory": "128Mi"}, tm["spec"])
    labels = tm["metadata"]["labels"]
    expect(labels.get("modelregistry.kubeflow.org/registered-model-id") == mid and
           labels.get("modelregistry.kubeflow.org/model-version-id") == vid and
           labels.get("modelregistry.kubeflow.org/name") == "model-registry-service" and
           labels.get("modelregistry.kubeflow.org/namespace") == REG_NS, labels)
    # the same name again: 409 in words; the first one untouched
    expect_error(deploy(ALICE, "iris-v1", vid, memory="256Mi"), 409, "kubernetes",
                 "a TrainedModel named iris-v1 already exists in namespace team-a")
    tm = json.loads(kubectl("-n", "team-a", "get", "trainedmodel", "iris-v1", "-o", "json"))
    expect(tm["spec"]["model"]["memory"] == "128Mi", "the clash changed the first one")
    # checked before anything is written
    expect_error(deploy(ALICE, "Bad.Name", vid), 400, "ui", "RFC 1123")
    expect_error(deploy(ALICE, "iris-x", vid, memory="a lot"), 400, "ui", "Kubernetes quantity")
    expect_error(deploy(ALICE, "iris-x", vid, isvc_name="single"), 400, "ui",
                 "does not serve several models")
    expect_error(deploy(ALICE, "iris-x", vid, isvc_name="missing"), 404, "kubernetes",
                 "missing not found in namespace team-a")
    expect_error(deploy(BOB, "iris-x", vid), 403, "kubernetes",
                 'user "bob" may not use the model registry')
    expect(not tm_exists("iris-x"), "a refused deploy created something")


def test_deploy_targets_and_deployments():
    st, _, raw, doc = as_user(ALICE, "GET", "/api/v1/namespaces/team-a/deploy_targets")
    expect(st == 200, raw)
    d = doc["data"]
    names = [i["name"] for i in d["items"]]
    expect(d["canDeploy"] is True and "sklearn" in names and "single" not in names, d)
    sk = [i for i in d["items"] if i["name"] == "sklearn"][0]
    expect(sk["predictor"]["memoryLimitBytes"] == 1 << 30 and
           sk["memoryAssignedBytes"] >= 128 << 20, sk)
    st, _, _, doc = as_user(ERIN, "GET", "/api/v1/namespaces/team-a/deploy_targets")
    expect(st == 200 and doc["data"]["canDeploy"] is False and
           "user erin may not create trainedmodels" in doc["data"]["reason"], doc)
    expect_error(as_user(ERIN, "GET", "/api/v1/namespaces/team-b/deploy_targets"), 403,
                 "kubernetes", "team-b")
    # the deployments of a model and of a version, as alice sees them (she may not list
    # cluster-wide: namespace by namespace)
    tm = json.loads(kubectl("-n", "team-a", "get", "trainedmodel", "iris-v1", "-o", "json"))
    mid = tm["metadata"]["labels"]["modelregistry.kubeflow.org/registered-model-id"]
    vid = tm["metadata"]["labels"]["modelregistry.kubeflow.org/model-version-id"]
    for q in (f"registeredModelId={mid}", f"modelVersionId={vid}",
              f"registeredModelId={mid}&modelVersionId={vid}"):
        st, _, raw, doc = as_user(ALICE, "GET", f"/api/v1/deployments?{q}")
        expect(st == 200, raw)
        expect([t["name"] for t in doc["data"]["trainedModels"]] == ["iris-v1"] and
               doc["data"]["complete"] is True, f"{q}: {doc}")
    st, _, _, doc = as_user(ALICE, "GET", f"/api/v1/deployments?modelVersionId={int(vid) + 1000}")
    expect(doc["data"]["trainedModels"] == [], doc)
    st, _, _, doc = as_user(BOB, "GET", f"/api/v1/deployments?registeredModelId={mid}")
    expect(st == 200 and doc["data"]["trainedModels"] == [], f"bob sees none: {doc}")
    expect_error(as_user(ALICE, "GET", "/api/v1/deployments?registeredModelId=1,x%3Dy"), 400, "ui")


def test_archive_refused_while_deployed():
    tm = json.loads(kubectl("-n", "team-a", "get", "trainedmodel", "iris-v1", "-o", "json"))
    mid = tm["metadata"]["labels"]["modelregistry.kubeflow.org/registered-model-id"]
    vid = tm["metadata"]["labels"]["modelregistry.kubeflow.org/model-version-id"]
    for path in (f"/registered_models/{mid}", f"/model_versions/{vid}"):
        expect_error(as_user(ALICE, "PATCH", MR + path, {"data": {"state": "ARCHIVED"}}), 409,
                     "ui", "served by TrainedModel team-a/iris-v1")
        st, _, _, doc = registry_direct("GET", path)
        expect(doc.get("state", "LIVE") == "LIVE", f"{path} archived anyway: {doc}")
    # other edits go through
    st, _, raw, _ = as_user(ALICE, "PATCH", MR + f"/model_versions/{vid}",
                            {"data": {"description": "still deployed"}})
    expect(st == 200, raw)
    # erin cannot see team-b; a deployment there still blocks (the server looks everywhere)
    apply(tm_obj := {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "TrainedModel",
                     "metadata": {"name": "hidden", "namespace": "team-b", "labels": {
                         "modelregistry.kubeflow.org/model-version-id": vid}},
                     "spec": {"inferenceService": "secret-isvc", "model": {
                         "storageUri": "s3://b/h", "framework": "sklearn", "memory": "1Mi"}}})
    kubectl("-n", "team-a", "delete", "trainedmodel", "iris-v1")
    expect_error(as_user(ERIN, "PATCH", MR + f"/model_versions/{vid}",
                         {"data": {"state": "ARCHIVED"}}), 409, "ui", "team-b/hidden")
    kubectl("-n", "team-b", "delete", "trainedmodel", tm_obj["metadata"]["name"])
    for path in (f"/model_versions/{vid}", f"/registered_models/{mid}"):
        st, _, raw, doc = as_user(ALICE, "PATCH", MR + path, {"data": {"state": "ARCHIVED"}})
        expect(st == 200 and doc["data"]["state"] == "ARCHIVED", f"{path}: {st} {raw[:300]!r}")


def test_isvc_events_and_replicas():
    event("e-cm", "ConfigMap", "modelconfig-sklearn-0", "Updated", "2026-12-01T10:40:00Z")
    event("e-other-tm", "TrainedModel", "other", "Loaded", "2026-12-01T10:50:00Z")
    event("e-unrelated", "ConfigMap", "unrelated", "Updated", "2026-12-01T10:55:00Z")
    st, _, raw, doc = as_user(U1, "GET", A + "/inferenceservices/sklearn/events")
    expect(st == 200, raw)
    got = [(e["involvedObject"]["kind"], e["involvedObject"]["name"]) for e in doc["data"]["items"]]
    expect(got == [("TrainedModel", "m1"), ("ConfigMap", "modelconfig-sklearn-0"),
                   ("InferenceService", "sklearn"), ("TrainedModel", "m1")], got)
    replicas = [{"pod": "sklearn-predictor-a", "state": "Loaded", "since": "2026-12-01T10:00:00Z"},
                {"pod": "sklearn-predictor-b", "state": "FailedToLoad", "reason": "bad pickle",
                 "since": "2026-12-01T10:01:00Z"}]
    kubectl("patch", "trainedmodel", "m2", "-n", "team-a", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"annotations": {
                "modelplane.io/replicas": json.dumps(replicas)}}}))
    st, _, _, doc = as_user(U1, "GET", A + "/inferenceservices/sklearn/trainedmodels")
    m2 = [t for t in doc["data"]["items"] if t["name"] == "m2"][0]
    expect(m2["replicas"] == [{**r, "reason": r.get("reason")} for r in replicas], m2["replicas"])
    expect(m2["memoryBytes"] == 256 << 20, m2)


def schemathesis(user, min_cases, *args):
    """schemathesis over upstream's BFF document (kubeflow/hub clients/ui/api/openapi/
    mod-arch.yaml, ../shared only) against this ui as user, writes with the user's CSRF token;
    fails on any 5xx."""
    spec = os.path.join(SRC, "..", "shared", "fixtures", "model-registry", "openapi",
                        "mod-arch.yaml")
    st_bin = os.environ.get("SCHEMATHESIS", "")
    if not os.path.isfile(spec):
        raise Skip(f"upstream's mod-arch.yaml is not beside the source tree ({spec})")
    if not os.access(st_bin, os.X_OK):
        raise Skip("schemathesis not installed (scripts/test sets SCHEMATHESIS)")
    who = {"kubeflow-userid": user}
    code, _, _, doc = get("/api/v1/user", who)
    expect(code == 200, doc)
    r = subprocess.run([st_bin, "run", spec, "--url", f"http://127.0.0.1:{ui.port}",
                        "-H", f"kubeflow-userid: {user}",
                        "-H", f"X-CSRF-Token: {doc['data']['csrfToken']}",
                        "--checks", "not_a_server_error", "--workers", "1",
                        "--request-timeout", "20", "--seed", "1",
                        "--suppress-health-check", "all", *args],
                       capture_output=True, text=True, timeout=900)
    out = r.stdout.splitlines()
    # the operations schemathesis cannot generate cases for (a "Schema Error": upstream's
    # document uses a `not` it does not support) are named, not counted against us
    for i, line in enumerate(out):
        if line.strip() == "Schema Error" and i > 0:
            print(f"# schemathesis cannot test {out[i - 1].strip()}: {out[i + 2].strip()[:160]}",
                  flush=True)
    failed = "FAILURES" in r.stdout or "Server error" in r.stdout
    if failed:  # the failures, each with its curl line, then the summary
        start = next((i for i, x in enumerate(out) if "FAILURES" in x), max(len(out) - 80, 0))
        for line in out[start:start + 200]:
            print("# " + line, flush=True)
    for line in out[-8:]:  # the summary
        print("# " + line, flush=True)
    ran = re.search(r"(\d+) generated", r.stdout)
    expect(ran and int(ran.group(1)) > min_cases, f"schemathesis ran too few cases: {out[-5:]}")
    expect(not failed, f"schemathesis found server errors (exit {r.returncode})")


def test_upstream_bff_contract_no_server_error():
    """Every operation as alice (the registry and the catalog allowed, namespaces not)."""
    schemathesis("alice", 1000, "--max-examples", "10")


def test_settings_registry_contract_as_admin():
    """The registry settings operations as reg-admin (the shipped modelplane-registry-admin),
    whose writes go through: no answer is a 5xx; what they made is removed after."""
    bind_in(REG_NS, "reg-admin", "modelplane-registry-admin", "reg-admin", kind="ClusterRole")
    try:
        schemathesis("reg-admin", 50, "--max-examples", "25", "--include-path-regex",
                     "^/api/v1/settings/(model_registry|certificates)")
    finally:
        kubectl("-n", REG_NS, "delete", "deployments,services,roles,persistentvolumeclaims", "-l",
                "app.kubernetes.io/managed-by=modelplane-ui", "--wait=false")


CS = S + "/model_catalog/source_configs"
CAT_ADMIN = {"kubeflow-userid": "catalog-admin"}
DEFAULT_SOURCES = """catalogs:
- id: dora_ai_models
  name: Dora AI
  type: yaml
  properties:
    yamlCatalogPath: dora.yaml
"""


def cm_data(name):
    r = subprocess.run([TESTENV, "kubectl", DIR, "-n", REG_NS, "get", "configmap", name,
                        "-o", "json"], capture_output=True, text=True)
    return json.loads(r.stdout).get("data", {}) if r.returncode == 0 else None


def test_catalog_source_configs():
    """The catalog's sources in two ConfigMaps of the catalog Service's namespace, changed as the
    user: catalog-admin may read and write ConfigMaps and Secrets there, bob nothing."""
    apply({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "model-catalog-default-sources", "namespace": REG_NS},
           "data": {"sources.yaml": DEFAULT_SOURCES, "dora.yaml": "models: []\n"}})
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "catalog-admin", "namespace": REG_NS},
           "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"],
                      "verbs": ["get", "create", "update", "delete"]}]})
    bind_in(REG_NS, "catalog-admin", "catalog-admin", "catalog-admin")

    st, _, raw, doc = as_user(CAT_ADMIN, "GET", CS)
    expect(st == 200, raw)
    expect([(c["id"], c["isDefault"]) for c in doc["data"]["catalogs"]] ==
           [("dora_ai_models", True)], doc)
    expect_error(as_user(BOB, "GET", CS), 403, "kubernetes",
                 f"user bob may not get configmaps model-catalog-default-sources in namespace "
                 f"{REG_NS}")
    new = {"data": {"id": "team_models", "name": "Team models", "type": "yaml",
                    "yaml": "source: Team\nmodels:\n- name: team/m1\n",
                    "includedModels": ["team/*"]}}
    expect_error(as_user(BOB, "POST", CS, new), 403, "kubernetes", "bob")
    expect(cm_data("model-catalog-sources") is None, "bob wrote nothing")

    # created: the user ConfigMap with the entry and the catalog under <id>.yaml
    st, _, raw, doc = as_user(CAT_ADMIN, "POST", CS, new)
    expect(st == 201, raw)
    expect(doc["data"]["id"] == "team_models" and doc["data"]["isDefault"] is False, doc)
    data = cm_data("model-catalog-sources")
    expect(data["team_models.yaml"] == new["data"]["yaml"], data)
    expect("id: team_models" in data["sources.yaml"], data)
    st, _, raw, doc = as_user(CAT_ADMIN, "GET", CS + "/team_models")
    expect(st == 200 and doc["data"]["yaml"] == new["data"]["yaml"], raw)
    expect(doc["data"]["includedModels"] == ["team/*"], doc)

    # bad input in words, nothing written
    expect_error(as_user(CAT_ADMIN, "POST", CS, new), 400, "ui", "already exists")
    bad = {"data": dict(new["data"], id="Bad-Id")}
    expect_error(as_user(CAT_ADMIN, "POST", CS, bad), 400, "ui", "lowercase")
    bad = {"data": dict(new["data"], id="broken", yaml="models: [")}
    expect_error(as_user(CAT_ADMIN, "POST", CS, bad), 400, "ui", "yaml line")
    expect_error(as_user(CAT_ADMIN, "GET", CS + "/does_not_exist"), 404, "ui", "does_not_exist")

    # a default source: disabled by an override; its name and its deletion refused
    st, _, raw, doc = as_user(CAT_ADMIN, "PATCH", CS + "/dora_ai_models",
                              {"data": {"enabled": False}})
    expect(st == 200 and doc["data"]["enabled"] is False and doc["data"]["isDefault"], raw)
    expect_error(as_user(CAT_ADMIN, "PATCH", CS + "/dora_ai_models",
                         {"data": {"name": "Changed Name"}}), 403, "ui", "'name'")
    expect_error(as_user(CAT_ADMIN, "PATCH", CS + "/dora_ai_models", {"data": {"type": "hf"}}),
                 403, "ui", "cannot change catalog source")
    expect_error(as_user(CAT_ADMIN, "DELETE", CS + "/dora_ai_models"), 403, "ui",
                 "default source")
    expect(cm_data("model-catalog-default-sources")["sources.yaml"] == DEFAULT_SOURCES,
           "the default ConfigMap is never written")

    # an hf source's key goes into upstream's Secret, never into the ConfigMap or a reply
    hf = {"data": {"id": "hub_org", "name": "Hub", "type": "hf", "allowedOrganization": "ibm",
                   "apiKey": "hf_test_token"}}
    st, _, raw, doc = as_user(CAT_ADMIN, "POST", CS, hf)
    expect(st == 201 and "apiKey" not in doc["data"], raw)
    r = subprocess.run([TESTENV, "kubectl", DIR, "-n", REG_NS, "get", "secret",
                        "catalog-hub-org-apikey", "-o", "json"], capture_output=True, text=True)
    expect(r.returncode == 0, r.stderr)
    sec = json.loads(r.stdout)
    expect(sec["metadata"]["labels"]["hub.kubeflow.org/hf-source"] == "HUB_ORG", sec["metadata"])
    expect("hf_test_token" not in json.dumps(cm_data("model-catalog-sources")), "no token")
    # who may write the ConfigMaps but not Secrets: the key's Secret is refused first, in words,
    # and the ConfigMap does not name a key that is not there
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "catalog-cm-only", "namespace": REG_NS},
           "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                      "verbs": ["get", "create", "update"]}]})
    bind_in(REG_NS, "catalog-cm-only", "catalog-cm-only", "cm-only")
    before = cm_data("model-catalog-sources")
    hf2 = {"data": dict(hf["data"], id="hub_two")}
    expect_error(as_user({"kubeflow-userid": "cm-only"}, "POST", CS, hf2), 403, "kubernetes",
                 "user cm-only may not create secrets")
    expect(cm_data("model-catalog-sources") == before, "nothing written after the refusal")

    # deleted: the entry and its catalog; the Secret this console made
    st, _, raw, doc = as_user(CAT_ADMIN, "DELETE", CS + "/team_models")
    expect(st == 204, raw)
    data = cm_data("model-catalog-sources")
    expect("team_models.yaml" not in data and "team_models" not in data["sources.yaml"], data)
    st, _, raw, doc = as_user(CAT_ADMIN, "DELETE", CS + "/hub_org")
    expect(st == 204, raw)
    r = subprocess.run([TESTENV, "kubectl", DIR, "-n", REG_NS, "get", "secret",
                        "catalog-hub-org-apikey"], capture_output=True, text=True)
    expect(r.returncode != 0, "the source's Secret went with it")
    st, _, raw, doc = as_user(CAT_ADMIN, "GET", CS)
    expect([c["id"] for c in doc["data"]["catalogs"]] == ["dora_ai_models"], doc)


def test_catalog_source_preview():
    """upstream's JSON preview request as the catalog's multipart /sources/preview, through the
    real catalog, for a user who may use the catalog."""
    req = {"data": {"type": "yaml", "excludedModels": ["team/old*"],
                    "properties": {"yaml": "source: Team\nmodels:\n- name: team/new\n"
                                           "- name: team/old-1\n"}}}
    st, _, raw, doc = as_user(ALICE, "POST", S + "/model_catalog/source_preview", req)
    expect(st == 200, raw)
    items = {i["name"]: i["included"] for i in doc["data"]["items"]}
    expect(items == {"team/new": True, "team/old-1": False}, doc)
    expect(doc["data"]["summary"] == {"totalModels": 2, "includedModels": 1,
                                      "excludedModels": 1}, doc)
    st, _, raw, doc = as_user(ALICE, "POST",
                              S + "/model_catalog/source_preview?statusFilter=excluded", req)
    expect(st == 200 and [i["name"] for i in doc["data"]["items"]] == ["team/old-1"], raw)
    expect_error(as_user(ALICE, "POST", S + "/model_catalog/source_preview",
                         {"data": {"type": "yaml"}}), 400, "ui", "properties.yaml")
    bad = {"data": {"type": "yaml", "properties": {"yaml": "models: [\n"}}}
    expect_error(as_user(ALICE, "POST", S + "/model_catalog/source_preview", bad), 422,
                 "catalog")
    expect_error(as_user(BOB, "POST", S + "/model_catalog/source_preview", req), 403)


def hub_auths(path):
    """The Authorization headers the hub stand-in saw on requests for path, in order."""
    st, _, raw, doc = call(int(HUB_URL.rsplit(":", 1)[1]), "GET", "/_requests")
    expect(st == 200, raw)
    return [r["authorization"] for r in doc if r["path"].startswith(path)]


def test_catalog_hf_preview_reads_the_sources_secret():
    """A preview naming a configured hf source without a key is sent with the key of the
    source's Secret, read as the user: the hub sees it; a user who may read the ConfigMaps but not
    Secrets gets a 403 in words and the hub sees no request."""
    PREVIEW = S + "/model_catalog/source_preview"
    bind("registry-catalog-admin", "User", "catalog-admin")  # may use the catalog
    bind("registry-cm-only", "User", "cm-only")
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "catalog-cm-only", "namespace": REG_NS},
           "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                      "verbs": ["get", "create", "update"]}]})
    bind_in(REG_NS, "catalog-cm-only", "catalog-cm-only", "cm-only")
    src = {"data": {"id": "acme_hub", "name": "Acme", "type": "hf",
                    "allowedOrganization": "acme-private", "includedModels": ["secret-model"],
                    "apiKey": "hf_good"}}
    st, _, raw, doc = as_user(CAT_ADMIN, "POST", CS, src)
    expect(st == 201, raw)
    req = {"data": {"id": "acme_hub", "type": "hf", "includedModels": ["secret-model"],
                    "properties": {"allowedOrganization": "acme-private"}}}

    # the stored key: checked by the hub first, then sent with the model's request
    seen = len(hub_auths("/api/whoami-v2"))
    st, _, raw, doc = as_user(CAT_ADMIN, "POST", PREVIEW, req)
    expect(st == 200, raw)
    expect([(i["name"], i["included"]) for i in doc["data"]["items"]] ==
           [("acme-private/secret-model", True)], doc)
    expect(hub_auths("/api/whoami-v2")[seen:] == ["Bearer hf_good"], hub_auths("/api/whoami-v2"))
    expect(hub_auths("/api/models/acme-private/secret-model")[-1] == "Bearer hf_good",
           hub_auths("/api/models/"))
    # the Secret decides: a revoked token there is the catalog's refusal in words
    apply({"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": "catalog-acme-hub-apikey", "namespace": REG_NS},
           "stringData": {"apiKey": "hf_revoked"}})
    expect_error(as_user(CAT_ADMIN, "POST", PREVIEW, req), 422, "catalog",
                 "invalid Hugging Face API credentials")
    # a key in the request is used as it is; no id: no Secret read, no key sent
    typed = {"data": dict(req["data"], properties={"allowedOrganization": "acme-private",
                                                   "apiKey": "hf_good"})}
    st, _, raw, doc = as_user(CAT_ADMIN, "POST", PREVIEW, typed)
    expect(st == 200, raw)
    seen = len(hub_auths("/api/whoami-v2"))
    anon = {"data": {k: v for k, v in req["data"].items() if k != "id"}}
    st, _, raw, doc = as_user(CAT_ADMIN, "POST", PREVIEW, anon)
    expect(st == 200, raw)
    expect(len(hub_auths("/api/whoami-v2")) == seen, "no key checked without one")
    expect(hub_auths("/api/models/acme-private/secret-model")[-1] == "", "no key sent")

    # who may read the ConfigMaps but not Secrets: refused in words, the hub sees nothing
    before = len(hub_auths("/api/"))
    expect_error(as_user({"kubeflow-userid": "cm-only"}, "POST", PREVIEW, req), 403, "kubernetes",
                 f"user cm-only may not get secrets catalog-acme-hub-apikey in namespace {REG_NS}")
    expect(len(hub_auths("/api/")) == before, "no request to the hub after the refusal")
    # bob may not use the catalog at all; an unknown source and a yaml one in words
    expect_error(as_user(BOB, "POST", PREVIEW, req), 403)
    expect_error(as_user(CAT_ADMIN, "POST", PREVIEW,
                         {"data": dict(req["data"], id="no_such_source")}), 404, "ui",
                 "no catalog source 'no_such_source'")
    expect_error(as_user(CAT_ADMIN, "POST", PREVIEW,
                         {"data": dict(req["data"], id="dora_ai_models")}), 400, "ui",
                 "is not a Hugging Face source")
    st, _, raw, _ = as_user(CAT_ADMIN, "DELETE", CS + "/acme_hub")
    expect(st == 204, raw)


# ---- model transfer jobs (docs/ui.md, "Model transfer jobs") ----
# mover may use the registry and holds the shipped ClusterRole modelplane-transfer-jobs in
# transfer-a; half may write ConfigMaps and Secrets there but not create Jobs; erin may use the
# registry but has no rights in transfer-a; bob may not use the registry.
TJ_NS = "transfer-a"
TJ = MR + "/model_transfer_jobs"
MOVER = {"kubeflow-userid": "mover"}
HALF = {"kubeflow-userid": "half"}
TJ_LABEL = "modelregistry.kubeflow.org/job-type=async-upload"
S3_JOB = {"name": "iris-s3", "jobDisplayName": "Iris from S3", "namespace": TJ_NS,
          "description": "iris", "author": "mover",
          "source": {"type": "s3", "bucket": "models", "key": "iris/v1", "region": "eu-west-1",
                     "endpoint": "http://minio.storage:9000",
                     "awsAccessKeyId": "AKIA-TEST-ID", "awsSecretAccessKey": "s3-secret-value"},
          "destination": {"type": "oci", "uri": "oci.example:5000/ml/iris:v1",
                          "username": "robot", "password": "oci-password-value"},
          "uploadIntent": "create_model", "registeredModelName": "iris",
          "modelVersionName": "v1", "versionDescription": "first", "sourceModelFormat": "onnx"}
CREDENTIALS = ("AKIA-TEST-ID", "s3-secret-value", "oci-password-value")


def transfer_setup():
    apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TJ_NS}})
    bind_in(TJ_NS, "transfer-mover", "modelplane-transfer-jobs", "mover", kind="ClusterRole")
    bind("registry-mover", "User", "mover")
    apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": "half", "namespace": TJ_NS},
           "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"],
                      "verbs": ["create", "get", "patch", "delete"]},
                     {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]}]})
    bind_in(TJ_NS, "half", "half", "half")
    bind("registry-half", "User", "half")


def objects(kind, selector=TJ_LABEL):
    out = kubectl("-n", TJ_NS, "get", kind, "-l", selector, "-o", "json")
    return json.loads(out)["items"]


def job_obj(name):
    r = subprocess.run([TESTENV, "kubectl", DIR, "-n", TJ_NS, "get", "job", name, "-o", "json"],
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def b64(s):
    import base64
    return base64.b64encode(s.encode()).decode()


def unb64(s):
    import base64
    return base64.b64decode(s).decode()


def test_transfer_job_create_as_upstream_shapes_it():
    transfer_setup()
    st, hdrs, raw, doc = as_user(MOVER, "POST", TJ, {"data": S3_JOB})
    expect(st == 201, f"mover creates: {st} {raw[:400]!r}")
    v = doc["data"]
    expect(v["name"] == "iris-s3" and v["jobDisplayName"] == "Iris from S3" and
           v["namespace"] == TJ_NS and v["uploadIntent"] == "create_model" and
           v["status"] in ("PENDING", "RUNNING"), v)
    expect(v["source"]["type"] == "s3" and v["source"]["bucket"] == "models" and
           v["destination"]["registry"] == "oci.example:5000", v)
    expect(hdrs.get("location") == TJ + "/iris-s3", hdrs)
    for secret in CREDENTIALS:
        expect(secret not in raw.decode(), f"{secret} in the answer")
    job = job_obj("iris-s3")
    labels, ann = job["metadata"]["labels"], job["metadata"]["annotations"]
    job_id = labels["modelregistry.kubeflow.org/job-id"]
    expect(v["id"] == job_id, (v["id"], job_id))
    expect(labels == {"modelregistry.kubeflow.org/job-type": "async-upload",
                      "modelregistry.kubeflow.org/job-id": job_id,
                      "modelregistry.kubeflow.org/model-registry-name": "modelplane",
                      **{k: x for k, x in labels.items() if "job-name" in k or
                         "controller-uid" in k}}, labels)
    spec = job["spec"]
    pod = spec["template"]["spec"]
    expect(spec["backoffLimit"] == 3 and pod["restartPolicy"] == "Never" and
           pod["securityContext"] == {"runAsNonRoot": True}, spec)
    expect(spec["template"]["metadata"]["labels"]["modelregistry.kubeflow.org/job-type"] ==
           "async-upload", spec["template"]["metadata"])
    c, = pod["containers"]
    expect(c["name"] == "async-upload" and
           c["image"] == "registry.example/modelplane:transfer-test" and
           c["command"] == ["modelplane", "async-upload"] and
           c["imagePullPolicy"] == "IfNotPresent", c)
    expect(c["securityContext"] == {"allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "seccompProfile": {"type": "RuntimeDefault"}},
           c["securityContext"])
    # the Secrets and the ConfigMap, found back by the job-id label
    secrets = {s["type"]: s for s in objects("secrets", f"modelregistry.kubeflow.org/job-id={job_id}")}
    cms = objects("configmaps", f"modelregistry.kubeflow.org/job-id={job_id}")
    expect(set(secrets) == {"Opaque", "kubernetes.io/dockerconfigjson"} and len(cms) == 1,
           (list(secrets), len(cms)))
    src, dst, cm = secrets["Opaque"], secrets["kubernetes.io/dockerconfigjson"], cms[0]
    expect(src["metadata"]["name"].startswith("iris-s3-source-creds-") and
           dst["metadata"]["name"].startswith("iris-s3-dest-creds-") and
           cm["metadata"]["name"].startswith("iris-s3-metadata-configmap-"),
           [o["metadata"]["name"] for o in (src, dst, cm)])
    expect({k: unb64(x) for k, x in src["data"].items()} ==
           {"AWS_ACCESS_KEY_ID": "AKIA-TEST-ID", "AWS_SECRET_ACCESS_KEY": "s3-secret-value",
            "AWS_S3_ENDPOINT": "http://minio.storage:9000", "AWS_S3_BUCKET": "models",
            "AWS_DEFAULT_REGION": "eu-west-1"}, "the source Secret")
    expect(json.loads(unb64(dst["data"][".dockerconfigjson"])) ==
           {"auths": {"oci.example:5000": {"auth": b64("robot:oci-password-value")}}},
           "the destination Secret")
    expect(cm["data"]["RegisteredModel.name"] == "iris" and
           cm["data"]["ModelVersion.name"] == "v1" and
           cm["data"]["ModelVersion.description"] == "first" and
           cm["data"]["ModelArtifact.model_format_name"] == "onnx" and
           cm["data"]["ModelArtifact.model_source_kind"] == "transfer_job" and
           cm["data"]["ModelArtifact.model_source_name"] == "iris-s3", cm["data"])
    for o in (src, dst, cm):
        expect(o["metadata"].get("ownerReferences") ==
               [{"apiVersion": "batch/v1", "kind": "Job", "name": "iris-s3",
                 "uid": job["metadata"]["uid"]}], o["metadata"])
    # the environment and mounts upstream's BFF gives its async-upload job
    reg = registry.url.split("//")[1]
    expect(c["env"] == [
        {"name": "MODEL_SYNC_SOURCE_TYPE", "value": "s3"},
        {"name": "MODEL_SYNC_DESTINATION_TYPE", "value": "oci"},
        {"name": "MODEL_SYNC_DESTINATION_OCI_URI", "value": "oci.example:5000/ml/iris:v1"},
        {"name": "MODEL_SYNC_DESTINATION_OCI_REGISTRY", "value": "oci.example:5000"},
        {"name": "MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH",
         "value": "/opt/creds/destination/.dockerconfigjson"},
        {"name": "MODEL_SYNC_REGISTRY_SERVER_ADDRESS", "value": "http://" + reg.split(":")[0]},
        {"name": "MODEL_SYNC_REGISTRY_PORT", "value": reg.split(":")[1]},
        {"name": "MODEL_SYNC_REGISTRY_IS_SECURE", "value": "false"},
        {"name": "MODEL_SYNC_METADATA_CONFIGMAP_PATH", "value": "/etc/model-metadata"},
        {"name": "MODEL_SYNC_MODEL_UPLOAD_INTENT", "value": "create_model"},
        {"name": "MODEL_SYNC_SOURCE_AWS_KEY", "value": "iris/v1"},
        {"name": "MODEL_SYNC_SOURCE_S3_CREDENTIALS_PATH", "value": "/opt/creds/source"}],
        c["env"])
    expect(c["volumeMounts"] == [
        {"name": "destination-credentials", "mountPath": "/opt/creds/destination",
         "readOnly": True},
        {"name": "model-metadata", "mountPath": "/etc/model-metadata", "readOnly": True},
        {"name": "source-credentials", "mountPath": "/opt/creds/source", "readOnly": True}],
        c["volumeMounts"])
    vols = {x["name"]: x for x in pod["volumes"]}
    expect(vols["destination-credentials"]["secret"]["secretName"] == dst["metadata"]["name"] and
           vols["destination-credentials"]["secret"]["items"] ==
           [{"key": ".dockerconfigjson", "path": ".dockerconfigjson"}] and
           vols["source-credentials"]["secret"]["secretName"] == src["metadata"]["name"] and
           vols["model-metadata"]["configMap"]["name"] == cm["metadata"]["name"], vols)
    expect(ann["modelregistry.kubeflow.org/source-secret"] == src["metadata"]["name"] and
           ann["modelregistry.kubeflow.org/dest-secret"] == dst["metadata"]["name"] and
           ann["modelregistry.kubeflow.org/configmap-name"] == cm["metadata"]["name"] and
           ann["modelregistry.kubeflow.org/display-name"] == "Iris from S3" and
           ann["modelregistry.kubeflow.org/source-bucket"] == "models", ann)
    for secret in CREDENTIALS:
        expect(secret not in json.dumps(job), f"{secret} in the Job")
        expect(secret not in open(ui.log.name).read(), f"{secret} in the ui's log")


def test_transfer_job_list_get_and_refusals():
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"?jobNamespace={TJ_NS}")
    expect(st == 200, raw)
    expect([j["name"] for j in doc["data"]["items"]] == ["iris-s3"] and doc["data"]["size"] == 1,
           doc)
    # mover may not list Jobs in every namespace: 403 in words, naming the way out
    expect_error(as_user(MOVER, "GET", TJ), 403, "kubernetes", "jobNamespace")
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"/iris-s3?jobNamespace={TJ_NS}")
    expect(st == 200 and doc["data"]["name"] == "iris-s3" and
           doc["data"]["sourceSecretName"].startswith("iris-s3-source-creds-"), raw)
    expect_error(as_user(MOVER, "GET", TJ + "/iris-s3"), 400, "ui", "jobNamespace")
    expect_error(as_user(MOVER, "GET", TJ + f"/nope?jobNamespace={TJ_NS}"), 404, "ui", "nope")
    expect_error(as_user(MOVER, "GET", TJ + f"/nope/events?jobNamespace={TJ_NS}"), 404, "ui")
    expect_error(as_user(MOVER, "DELETE", TJ + f"/nope?jobNamespace={TJ_NS}"), 404, "ui")
    # a Job of another registry is not this registry's job: 404, and not in its list
    label = "modelregistry.kubeflow.org/model-registry-name"
    kubectl("-n", TJ_NS, "label", "--overwrite", "job", "iris-s3", f"{label}=other")
    try:
        expect_error(as_user(MOVER, "GET", TJ + f"/iris-s3?jobNamespace={TJ_NS}"), 404, "ui",
                     "iris-s3")
        st, _, raw, doc = as_user(MOVER, "GET", TJ + f"?jobNamespace={TJ_NS}")
        expect(st == 200 and doc["data"]["items"] == [], raw)
    finally:
        kubectl("-n", TJ_NS, "label", "--overwrite", "job", "iris-s3", f"{label}=modelplane")
    expect_error(as_user(BOB, "GET", TJ + f"?jobNamespace={TJ_NS}"), 403, "kubernetes",
                 'user "bob" may not use the model registry')
    # with a bearer token the calls are the token's: the admin lists every namespace
    st, _, raw, doc = get(TJ, {"Authorization": "Bearer " + ADMIN_TOKEN})
    expect(st == 200 and [j["name"] for j in doc["data"]["items"]] == ["iris-s3"], raw)
    expect_error(get(TJ + f"?jobNamespace={TJ_NS}", {"Authorization": "Bearer " + USER1_TOKEN}),
                 403, "kubernetes")
    # half may read the Job but not list its pods: the events are refused in words
    expect_error(as_user(HALF, "GET", TJ + f"/iris-s3/events?jobNamespace={TJ_NS}"), 403,
                 "kubernetes", "user half may not list pods in namespace transfer-a")
    before = len(objects("secrets")) + len(objects("configmaps"))
    # a name clash: 409, nothing written
    expect_error(as_user(MOVER, "POST", TJ, {"data": S3_JOB}), 409, "kubernetes",
                 "iris-s3 already exists")
    # bad input: 400 naming the field, nothing written
    bad = dict(S3_JOB, name="other", source=dict(S3_JOB["source"], bucket=""))
    expect_error(as_user(MOVER, "POST", TJ, {"data": bad}), 400, "ui", "source.bucket")
    bad = dict(S3_JOB, name="other", uploadIntent="delete_everything")
    expect_error(as_user(MOVER, "POST", TJ, {"data": bad}), 400, "ui", "uploadIntent")
    bad = dict(S3_JOB, name="Not_A_Name")
    expect_error(as_user(MOVER, "POST", TJ, {"data": bad}), 400, "ui", "name")
    expect_error(as_user(MOVER, "POST", TJ, {"data": dict(S3_JOB, name=7)}), 400, "ui", "name")
    # half may write the Secrets but not the Job: 403 in words, and what it wrote is removed
    expect_error(as_user(HALF, "POST", TJ, {"data": dict(S3_JOB, name="half-job")}), 403,
                 "kubernetes", "user half may not create jobs.batch half-job in namespace transfer-a")
    # erin may not even read Jobs there; bob may not use the registry
    expect_error(as_user(ERIN, "POST", TJ, {"data": dict(S3_JOB, name="erin-job")}), 403,
                 "kubernetes", "user erin may not get jobs.batch")
    expect_error(as_user(BOB, "POST", TJ, {"data": dict(S3_JOB, name="bob-job")}), 403,
                 "kubernetes", 'user "bob" may not use the model registry')
    expect(len(objects("secrets")) + len(objects("configmaps")) == before,
           "a refused create left objects behind")
    expect(job_obj("half-job") is None and job_obj("erin-job") is None, "a refused Job exists")


def test_transfer_job_events_of_its_pods():
    # the test control plane runs no job controller: the Job's pod is made here, as the job
    # controller labels it (the template's labels and job-name); an Event about that pod, and
    # one about another pod
    pod = "iris-s3-abcde"
    apply({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": pod, "namespace": TJ_NS,
                        "labels": {"job-name": "iris-s3",
                                   "modelregistry.kubeflow.org/job-type": "async-upload"}},
           "spec": {"restartPolicy": "Never",
                    "containers": [{"name": "async-upload", "image": "modelplane"}]}})
    apply({"apiVersion": "v1", "kind": "Event",
           "metadata": {"name": "iris-s3-pulled", "namespace": TJ_NS},
           "involvedObject": {"kind": "Pod", "name": pod, "namespace": TJ_NS},
           "reason": "Pulled", "message": "Successfully pulled image", "type": "Normal",
           "firstTimestamp": "2026-12-07T10:00:00Z", "lastTimestamp": "2026-12-07T10:00:02Z",
           "count": 1, "source": {"component": "kubelet"}})
    apply({"apiVersion": "v1", "kind": "Event",
           "metadata": {"name": "other-pod-event", "namespace": TJ_NS},
           "involvedObject": {"kind": "Pod", "name": "someone-else", "namespace": TJ_NS},
           "reason": "Other", "message": "not this job's", "type": "Normal",
           "lastTimestamp": "2026-12-07T10:00:02Z", "count": 1})
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"/iris-s3/events?jobNamespace={TJ_NS}")
    expect(st == 200, raw)
    expect(doc["data"]["events"] == [{"timestamp": "2026-12-07T10:00:02Z", "type": "Normal",
                                      "reason": "Pulled",
                                      "message": "Successfully pulled image"}], doc)
    expect_error(as_user(ERIN, "GET", TJ + f"/iris-s3/events?jobNamespace={TJ_NS}"), 403,
                 "kubernetes", "erin")


def job_status(name):
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"/{name}?jobNamespace={TJ_NS}")
    expect(st == 200, raw)
    return doc["data"]


def job_status_patch(name, status):
    kubectl("-n", TJ_NS, "patch", "job", name, "--subresource=status", "--type=merge", "-p",
            json.dumps({"status": status}))


FAILED_CONDITIONS = [
    {"type": t, "status": "True", "reason": "BackoffLimitExceeded",
     "message": "Job has reached the specified backoff limit",
     "lastTransitionTime": "2026-12-07T10:00:05Z", "lastProbeTime": "2026-12-07T10:00:05Z"}
    for t in ("FailureTarget", "Failed")]


def test_transfer_job_status_retry_and_delete():
    """The status as the Job (written here as the job controller would: the test control plane
    runs none) and its pod say it."""
    expect(job_status("iris-s3")["status"] == "PENDING", "no pod active yet")
    job_status_patch("iris-s3", {"active": 1, "startTime": "2026-12-07T10:00:00Z"})
    expect(job_status("iris-s3")["status"] == "RUNNING", "an active pod")
    # not failed: no retry
    expect_error(as_user(MOVER, "PATCH", TJ + "/iris-s3",
                         {"data": {"name": "iris-s3-retry", "namespace": TJ_NS}}), 400, "ui",
                 "has not failed")
    # the pod cannot pull its image: FAILED already, in upstream's words, in the list too
    kubectl("-n", TJ_NS, "patch", "pod", "iris-s3-abcde", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"containerStatuses": [
                {"name": "async-upload", "image": "modelplane", "imageID": "", "ready": False,
                 "restartCount": 0, "state": {"waiting": {
                     "reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}]}}))
    v = job_status("iris-s3")
    expect(v["status"] == "FAILED" and
           v["errorMessage"] == "ImagePullBackOff: Back-off pulling image", v)
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"?jobNamespace={TJ_NS}")
    expect(st == 200 and doc["data"]["items"][0]["status"] == "FAILED", raw)
    # a pod that ended wrote the ids it registered (its termination message): in the list
    apply({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "iris-s3-ended", "namespace": TJ_NS,
                        "labels": {"job-name": "iris-s3",
                                   "modelregistry.kubeflow.org/job-type": "async-upload"}},
           "spec": {"restartPolicy": "Never",
                    "containers": [{"name": "async-upload", "image": "modelplane"}]}})
    kubectl("-n", TJ_NS, "patch", "pod", "iris-s3-ended", "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"containerStatuses": [
                {"name": "async-upload", "image": "modelplane", "imageID": "", "ready": False,
                 "restartCount": 0, "state": {"terminated": {
                     "exitCode": 0, "reason": "Completed",
                     "message": json.dumps({"RegisteredModel": {"id": "41"},
                                            "ModelVersion": {"id": "42"},
                                            "ModelArtifact": {"id": "43"}})}}}]}}))
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"?jobNamespace={TJ_NS}")
    item = doc["data"]["items"][0]
    expect(st == 200 and (item["registeredModelId"], item["modelVersionId"],
                          item["modelArtifactId"]) == ("41", "42", "43"), raw)
    kubectl("-n", TJ_NS, "delete", "pod", "iris-s3-ended")
    # the Job failed: its message
    job_status_patch("iris-s3", {"active": 0, "failed": 4, "conditions": FAILED_CONDITIONS})
    v = job_status("iris-s3")
    expect(v["status"] == "FAILED" and
           v["errorMessage"] == "Job has reached the specified backoff limit", v)
    old = job_obj("iris-s3")
    old_names = [old["metadata"]["annotations"]["modelregistry.kubeflow.org/" + k]
                 for k in ("configmap-name", "source-secret", "dest-secret")]
    # a retry: a new job from the failed one, its credentials reused, the old one deleted
    expect_error(as_user(MOVER, "PATCH", TJ + "/iris-s3",
                         {"data": {"name": "iris-s3", "namespace": TJ_NS}}), 400, "ui", "name")
    expect_error(as_user(MOVER, "PATCH", TJ + "/iris-s3", {"data": {"name": "x"}}), 400, "ui",
                 "namespace")
    st, _, raw, doc = as_user(MOVER, "PATCH", TJ + "/iris-s3?deleteOldJob=true",
                              {"data": {"name": "iris-s3-retry", "namespace": TJ_NS}})
    expect(st == 200, raw)
    expect(doc["data"]["name"] == "iris-s3-retry" and
           doc["data"]["jobDisplayName"] == "Iris from S3" and
           doc["data"]["source"]["bucket"] == "models", doc)
    new = job_obj("iris-s3-retry")
    expect(new["spec"]["template"]["spec"]["containers"][0]["env"] ==
           old["spec"]["template"]["spec"]["containers"][0]["env"], "the same environment")
    new_id = new["metadata"]["labels"]["modelregistry.kubeflow.org/job-id"]
    secrets = {s["type"]: s for s in
               objects("secrets", f"modelregistry.kubeflow.org/job-id={new_id}")}
    expect(unb64(secrets["Opaque"]["data"]["AWS_SECRET_ACCESS_KEY"]) == "s3-secret-value" and
           json.loads(unb64(secrets["kubernetes.io/dockerconfigjson"]["data"][
               ".dockerconfigjson"]))["auths"]["oci.example:5000"]["auth"] ==
           b64("robot:oci-password-value"), "the credentials reused")
    wait_until(lambda: job_obj("iris-s3") is None, "the old job to go")
    left = [o["metadata"]["name"] for o in objects("secrets") + objects("configmaps")]
    expect(not set(old_names) & set(left), f"the old job's objects stay: {left}")
    # deleted: the Job and its Secrets and ConfigMap; half may not delete Jobs: 403, nothing gone
    expect_error(as_user(HALF, "DELETE", TJ + f"/iris-s3-retry?jobNamespace={TJ_NS}"), 403,
                 "kubernetes", "user half may not delete jobs.batch")
    expect(job_obj("iris-s3-retry") is not None, "half deleted the job")
    st, _, raw, doc = as_user(MOVER, "DELETE", TJ + f"/iris-s3-retry?jobNamespace={TJ_NS}")
    expect(st == 200 and doc["data"]["name"] == "iris-s3-retry", raw)
    wait_until(lambda: job_obj("iris-s3-retry") is None, "the job to go")
    expect(objects("secrets", f"modelregistry.kubeflow.org/job-id={new_id}") == [] and
           objects("configmaps", f"modelregistry.kubeflow.org/job-id={new_id}") == [],
           "the job's Secrets and ConfigMap stay")
    st, _, raw, doc = as_user(MOVER, "GET", TJ + f"?jobNamespace={TJ_NS}")
    expect(st == 200 and doc["data"]["items"] == [], raw)


def test_transfer_job_uri_source():
    job = {"name": "hf-job", "jobDisplayName": "From HF", "namespace": TJ_NS,
           "source": {"type": "uri", "uri": "hf://org/model"},
           "destination": {"type": "oci", "uri": "quay.io/org/m:v2", "username": "u",
                           "password": "p"},
           "uploadIntent": "update_artifact", "modelArtifactId": "12"}
    st, _, raw, doc = as_user(MOVER, "POST", TJ, {"data": job})
    expect(st == 201 and doc["data"]["source"] == {"type": "uri", "uri": "hf://org/model"}, raw)
    c = job_obj("hf-job")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in c["env"]}
    expect(env["MODEL_SYNC_SOURCE_URI"] == "hf://org/model" and
           env["MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE"] == "quay.io/quay/busybox:latest" and
           "MODEL_SYNC_SOURCE_S3_CREDENTIALS_PATH" not in env, env)
    expect([m["name"] for m in c["volumeMounts"]] ==
           ["destination-credentials", "model-metadata"], c["volumeMounts"])
    st, _, raw, _ = as_user(MOVER, "DELETE", TJ + f"/hf-job?jobNamespace={TJ_NS}")
    expect(st == 200, raw)
    # a console without --registry-url has no address to give a job: 503 before any write
    u = Server(["ui", "-l", "127.0.0.1:0", "--kubeconfig", SA_KUBECONFIG, "--trusted-proxy",
                "127.0.0.1/32", "--registry-service", f"{REG_NS}/model-registry-service"],
               name="ui-no-registry")
    try:
        expect_error(as_user(MOVER, "POST", TJ, {"data": job}, port=u.port), 503, "registry",
                     "--registry-url")
    finally:
        u.stop()
    expect(job_obj("hf-job") is None and objects("secrets") == [], "written without a registry")


def crane_binary():
    """crane (bench/peers/crane/build, as scripts/test builds it for the transfer suite)."""
    if os.environ.get("MODELPLANE_CRANE"):
        return os.environ["MODELPLANE_CRANE"]
    r = subprocess.run([os.path.join(SRC, "bench/peers/crane/build")], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise Skip(f"no crane (bench/peers/crane/build: {r.stderr.strip()[-200:]})")
    return r.stdout.strip()


def run_job_as_kubelet(job, env_override):
    """Runs a Job's one container as a kubelet would, on this machine: its Secret and ConfigMap
    volumes written under a directory of their own (each mountPath moved there, and every
    environment value that names a mounted path with it), its environment, its command. Returns
    (exit status, stderr, termination message)."""
    import base64
    root = tempfile.mkdtemp(prefix="kubelet-", dir=T)
    pod = job["spec"]["template"]["spec"]
    c, = pod["containers"]
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    moved = {}
    for m in c.get("volumeMounts", []):
        v = vols[m["name"]]
        if "secret" in v:
            obj = json.loads(kubectl("-n", TJ_NS, "get", "secret", v["secret"]["secretName"],
                                     "-o", "json"))
            data = {k: base64.b64decode(x) for k, x in obj.get("data", {}).items()}
        else:
            obj = json.loads(kubectl("-n", TJ_NS, "get", "configmap", v["configMap"]["name"],
                                     "-o", "json"))
            data = {k: x.encode() for k, x in obj.get("data", {}).items()}
        items = (v.get("secret") or v.get("configMap")).get("items")
        files = {i["path"]: data[i["key"]] for i in items} if items else data
        d = root + m["mountPath"]
        os.makedirs(d, exist_ok=True)
        for path, content in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
            with open(os.path.join(d, path), "wb") as f:
                f.write(content)
        moved[m["mountPath"]] = d
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_SYNC_", "AWS_"))}
    for e in c.get("env", []):
        value = e["value"]
        for mount, d in moved.items():
            if value == mount or value.startswith(mount + "/"):
                value = d + value[len(mount):]
        env[e["name"]] = value
    env.update(env_override)
    env["TERMINATION_MESSAGE_PATH"] = os.path.join(root, "termination-log")
    env["MODEL_SYNC_STORAGE_PATH"] = os.path.join(root, "storage")
    cmd = c["command"] + c.get("args", [])
    expect(cmd[0] == "modelplane", cmd)
    r = subprocess.run([os.path.join(os.environ.get("MODELPLANE_BUILD_ROOT", "build"), "src",
                                     "cmd", "modelplane")] + cmd[1:],
                       capture_output=True, text=True, env=env, timeout=300)
    term = open(env["TERMINATION_MESSAGE_PATH"]).read() \
        if os.path.exists(env["TERMINATION_MESSAGE_PATH"]) else ""
    return r.returncode, r.stderr, term


def test_transfer_job_runs_to_the_registry():
    """The two halves of a transfer together: the Job the console writes as the user, run as a
    kubelet would run it, is a `modelplane async-upload` that downloads the model, pushes it to an
    OCI registry (crane's) with the Secret's credentials and registers it with the ConfigMap's
    metadata in the registry the console names. Only two variables differ from the Job's: no base
    image (the test machine reaches no quay.io) and TLS verification off (crane serves plain
    HTTP on loopback)."""
    import http.server
    import threading
    crane = crane_binary()
    port = None
    import socket
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    oci = subprocess.Popen([crane, "registry", "serve", "--address", f"127.0.0.1:{port}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    www = tempfile.mkdtemp(prefix="www-", dir=T)
    with open(os.path.join(www, "model.onnx"), "wb") as f:
        f.write(b"onnx weights " * 100)

    class Files(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=www, **kw)

        def log_message(self, *a):
            pass

    files = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
    threading.Thread(target=files.serve_forever, daemon=True).start()
    try:
        wait_until(lambda: subprocess.run([crane, "catalog", f"127.0.0.1:{port}", "--insecure"],
                                          capture_output=True).returncode == 0, "crane registry")
        job = {"name": "e2e-onnx", "jobDisplayName": "End to end", "namespace": TJ_NS,
               "source": {"type": "uri",
                          "uri": f"http://127.0.0.1:{files.server_address[1]}/model.onnx"},
               "destination": {"type": "oci", "uri": f"127.0.0.1:{port}/ml/e2e:v1",
                               "username": "robot", "password": "pw"},
               "uploadIntent": "create_model", "registeredModelName": "e2e-model",
               "modelVersionName": "v1", "versionDescription": "from a transfer job",
               "sourceModelFormat": "onnx"}
        st, _, raw, doc = as_user(MOVER, "POST", TJ, {"data": job})
        expect(st == 201, raw)
        rc, err, term = run_job_as_kubelet(job_obj("e2e-onnx"), {
            "MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE": "",
            "MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY": "false"})
        expect(rc == 0, f"async-upload exited {rc}: {err[-1500:]}")
        res = json.loads(term)
        # what the registry now holds, read through the console as the user
        st, _, raw, doc = as_user(MOVER, "GET", MR + f"/registered_models/{res['RegisteredModel']['id']}")
        expect(st == 200 and doc["data"]["name"] == "e2e-model", raw)
        st, _, raw, doc = as_user(MOVER, "GET",
                                  MR + f"/model_versions/{res['ModelVersion']['id']}/artifacts")
        arts = doc["data"]["items"]
        expect(st == 200 and len(arts) == 1 and arts[0]["uri"] == f"oci://127.0.0.1:{port}/ml/e2e:v1"
               and arts[0]["modelFormatName"] == "onnx"
               and arts[0].get("modelSourceName") == "e2e-onnx", arts)
        # and the image: the model under /models in its one layer
        r = subprocess.run([crane, "export", f"127.0.0.1:{port}/ml/e2e:v1", "-", "--insecure"],
                           capture_output=True)
        expect(r.returncode == 0, r.stderr[-500:])
        import io
        import tarfile
        with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tf:
            names = tf.getnames()
            expect("models/model.onnx" in names, names)
            expect(tf.extractfile("models/model.onnx").read() == b"onnx weights " * 100, "content")
        st, _, raw, _ = as_user(MOVER, "DELETE", TJ + f"/e2e-onnx?jobNamespace={TJ_NS}")
        expect(st == 200, raw)
    finally:
        files.shutdown()
        oci.terminate()
        oci.wait()


for t in (test_namespaces_only_those_the_user_may_read, test_forbidden_namespace_is_403_naming_it,
          test_inferenceservices, test_trainedmodels_every_condition_and_loaded,
          test_polling_with_etag, test_events_newest_first, test_bearer_passthrough,
          test_bad_token_is_401, test_server_without_impersonate_right,
          test_unreachable_api_server_is_503,
          test_registry_only_for_users_who_may_get_its_service,
          test_catalog_only_for_users_who_may_get_its_service,
          test_registry_access_by_group_and_by_token, test_grant_and_revoke_take_effect,
          test_server_without_subjectaccessreview_right,
          test_deploy_as_the_user_rbac_decides, test_deploy_targets_and_deployments,
          test_archive_refused_while_deployed, test_isvc_events_and_replicas,
          test_registries_discovered_per_user, test_each_registry_routes_and_authorizes_alone,
          test_deploy_from_another_registry, test_settings_registries,
          test_settings_role_bindings_grant_and_revoke, test_settings_groups,
          test_settings_registry_refusals_write_nothing, test_settings_registry_create_patch_delete,
          test_settings_registry_postgres_then_sqlite, test_settings_certificates,
          test_settings_registry_contract_as_admin,
          test_catalog_source_configs, test_catalog_source_preview,
          test_catalog_hf_preview_reads_the_sources_secret,
          test_transfer_job_create_as_upstream_shapes_it,
          test_transfer_job_list_get_and_refusals, test_transfer_job_events_of_its_pods,
          test_transfer_job_status_retry_and_delete, test_transfer_job_uri_source,
          test_transfer_job_runs_to_the_registry,
          test_upstream_bff_contract_no_server_error):
    if ONLY and t.__name__ not in ONLY:
        continue
    tap.run(t)
tap.finish()
