# SPDX-License-Identifier: Apache-2.0
"""modelplane ui over real HTTP, without Kubernetes: a real `modelplane registry` on SQLite, a
real `modelplane catalog` with the test catalog, and the ui in front (tests/ui/meson.build).
Identity, CSRF, the envelope, paging through 10,000 registered models, a registry that is down
or broken while the catalog keeps working, static files (traversal, symlinks, types, caching,
gzip, the SPA fallback), the security headers and every limit."""
import gzip
import http.client
import http.server
import json
import os
import shutil
import tempfile
import threading

from uitest import (HANG, SRC, Server, Tap, call, expect, expect_error)

T = tempfile.mkdtemp(prefix="ui-http-")
tap = Tap()
tap.cleanups.append(lambda: shutil.rmtree(T, ignore_errors=True))

registry = Server(["registry", "-p", "0", "-d", os.path.join(T, "mr.db")], name="registry")
tap.cleanups.append(registry.stop)
catalog = Server(["catalog", "-l", "127.0.0.1:0", "--catalogs-path",
                  os.path.join(SRC, "tests/fixtures/catalog/sources.yaml")], name="catalog")
tap.cleanups.append(catalog.stop)

# A built frontend: index.html, a hashed asset with a .gz sibling, a symlink inside, a symlink
# out of the directory, a hidden file, a subdirectory.
DIST = os.path.join(T, "dist")
os.makedirs(os.path.join(DIST, "assets"))
os.makedirs(os.path.join(DIST, "sub"))
INDEX = b"<!doctype html><html><head><script src=\"/assets/app-1a2b3c4d.js\"></script></head></html>"
open(os.path.join(DIST, "index.html"), "wb").write(INDEX)
APP = b"console.log('app');\n" * 100
open(os.path.join(DIST, "assets", "app-1a2b3c4d.js"), "wb").write(APP)
open(os.path.join(DIST, "assets", "app-1a2b3c4d.js.gz"), "wb").write(gzip.compress(APP))
open(os.path.join(DIST, "favicon.svg"), "wb").write(b"<svg/>")
open(os.path.join(DIST, ".secret"), "wb").write(b"hidden")
open(os.path.join(T, "outside.txt"), "wb").write(b"outside the static dir")
os.symlink(os.path.join(T, "outside.txt"), os.path.join(DIST, "escape.txt"))
os.symlink("../favicon.svg", os.path.join(DIST, "sub", "inside.svg"))
os.symlink(T, os.path.join(DIST, "up"))

SECRET = os.path.join(T, "proxy-secret")
open(SECRET, "w").write("sekrit-123\n")

# No Kubernetes here, so nobody could be authorized for the registry: every signed-in user is let
# in explicitly (ui_kube.py covers the SubjectAccessReviews).
ui = Server(["ui", "-l", "127.0.0.1:0", "--no-kube", "--insecure-skip-access-review",
             "--static-dir", DIST,
             "--registry-url", registry.url, "--catalog-url", catalog.url,
             "--trusted-proxy", "127.0.0.0/8"], name="ui")
tap.cleanups.append(ui.stop)
# loopback is not trusted here: only the shared secret makes the header count
ui_secret = Server(["ui", "-l", "127.0.0.1:0", "--no-kube", "--insecure-skip-access-review",
                    "--static-dir", os.path.join(T, "empty"),
                    "--registry-url", registry.url, "--catalog-url", catalog.url,
                    "--trusted-proxy", "10.0.0.0/8", "--proxy-secret-file", SECRET],
                   name="ui-secret") if os.makedirs(os.path.join(T, "empty")) is None else None
tap.cleanups.append(ui_secret.stop)

USER = {"kubeflow-userid": "alice@example.com"}
MR = "/api/v1/model_registry/modelplane"


def get(path, headers=None, port=None):
    return call(port or ui.port, "GET", path, headers={**USER, **(headers or {})})


def csrf(port=None, headers=None):
    st, _, raw, doc = call(port or ui.port, "GET", "/api/v1/user", headers=headers or USER)
    expect(st == 200, f"/api/v1/user: {st} {raw!r}")
    return doc["data"]["csrfToken"]


def write(method, path, body, headers=None, token=True, port=None):
    h = dict(USER)
    if token:
        h["X-CSRF-Token"] = csrf(port)
    h.update(headers or {})
    return call(port or ui.port, method, path, body=body, headers=h)


def test_healthcheck_needs_no_identity():
    st, h, _, doc = call(ui.port, "GET", "/healthcheck")
    expect(st == 200 and doc["status"] == "available", f"{st} {doc}")
    expect("version" in doc["system_info"], "version")


def test_no_identity_is_401_with_a_clear_message():
    err = expect_error(call(ui.port, "GET", MR + "/registered_models"), 401, "ui",
                       "no identity")
    expect("kubeflow-userid" in err["message"], err["message"])
    st, h, _, _ = call(ui.port, "GET", "/api/v1/user")
    expect(h.get("www-authenticate") == "Bearer", f"WWW-Authenticate {h}")


def test_user_header_from_trusted_address():
    st, h, _, doc = get("/api/v1/user")
    expect(st == 200, st)
    d = doc["data"]
    expect(d["userId"] == "alice@example.com" and d["authMode"] == "proxy", d)
    expect(len(d["csrfToken"]) == 64 and d["clusterAdmin"] is False, d)


def test_untrusted_header_needs_the_shared_secret():
    err = expect_error(call(ui_secret.port, "GET", "/api/v1/user", headers=USER), 401, "ui",
                       "untrusted address 127.0.0.1")
    expect("X-Proxy-Secret" in err["message"], err["message"])
    expect_error(call(ui_secret.port, "GET", "/api/v1/user",
                      headers={**USER, "X-Proxy-Secret": "sekrit-12"}), 401)
    st, _, _, doc = call(ui_secret.port, "GET", "/api/v1/user",
                         headers={**USER, "X-Proxy-Secret": "sekrit-123"})
    expect(st == 200 and doc["data"]["userId"] == "alice@example.com", f"{st} {doc}")


def test_bearer_without_kubernetes():
    st, _, _, doc = call(ui.port, "GET", "/api/v1/user", headers={"Authorization": "Bearer abc"})
    expect(st == 200 and doc["data"]["authMode"] == "bearer", f"{st} {doc}")
    expect_error(call(ui.port, "GET", "/api/v1/user", headers={"Authorization": "Basic YTpi"}),
                 400, "ui", "Bearer")


def test_malformed_identity_headers():
    expect_error(get("/api/v1/user", {"kubeflow-userid": "u" * 300}), 400, "ui",
                 "kubeflow-userid")
    expect_error(get("/api/v1/user", {"kubeflow-userid": "system:admin"}), 400, "ui", "reserved")


def test_write_without_csrf_is_refused():
    expect_error(write("POST", MR + "/registered_models", {"data": {"name": "no-csrf"}},
                       token=False), 403, "ui", "X-CSRF-Token")
    expect_error(write("POST", MR + "/registered_models", {"data": {"name": "no-csrf"}},
                       token=False, headers={"X-CSRF-Token": "0" * 64}), 403, "ui", "X-CSRF-Token")
    # another user's token does not work for alice
    bob = csrf(headers={"kubeflow-userid": "bob"})
    expect_error(write("POST", MR + "/registered_models", {"data": {"name": "no-csrf"}},
                       token=False, headers={"X-CSRF-Token": bob}), 403)
    st, _, _, doc = get(MR + "/registered_models?filterQuery=" +
                        "name%20%3D%20%27no-csrf%27")
    expect(st == 200 and doc["data"]["size"] == 0, f"nothing was written: {doc}")


def test_write_rules_content_type_and_origin():
    h = {"X-CSRF-Token": csrf(), **USER, "Content-Type": "text/plain"}
    st, _, raw, doc = call(ui.port, "POST", MR + "/registered_models",
                           raw_body=b'{"data":{"name":"x"}}', headers=h)
    expect(st == 415, f"{st} {raw!r}")
    expect_error(write("POST", MR + "/registered_models", {"data": {"name": "x"}},
                       headers={"Origin": "http://evil.example"}), 403, "ui", "Origin")


def test_register_archive_restore_and_html_name():
    name = "<img src=x onerror=alert(1)> & \"quotes\""
    st, h, raw, doc = write("POST", MR + "/registered_models", {"data": {"name": name}})
    expect(st == 201, f"{st} {raw!r}")
    expect(h["content-type"] == "application/json", h["content-type"])
    expect(h["x-content-type-options"] == "nosniff", h)
    m = doc["data"]
    expect(m["name"] == name, f"the name comes back as the same text: {m['name']!r}")
    st, _, _, doc = write("POST", MR + f"/registered_models/{m['id']}/versions",
                          {"data": {"name": "v1", "registeredModelId": m["id"]}})
    expect(st == 201, f"version: {st} {doc}")
    v = doc["data"]
    st, _, _, doc = write("POST", MR + f"/model_versions/{v['id']}/artifacts",
                          {"data": {"artifactType": "model-artifact", "name": "a1",
                                    "uri": "s3://b/m"}})
    expect(st == 201, f"artifact: {st} {doc}")
    st, _, _, doc = get(MR + f"/model_versions/{v['id']}/artifacts")
    expect(st == 200 and doc["data"]["size"] == 1, doc)
    st, _, _, doc = get(MR + f"/registered_models/{m['id']}/versions")
    expect(st == 200 and doc["data"]["items"][0]["name"] == "v1", doc)
    for state in ("ARCHIVED", "LIVE"):
        st, _, _, doc = write("PATCH", MR + f"/registered_models/{m['id']}",
                              {"data": {"state": state}})
        expect(st == 200 and doc["data"]["state"] == state, f"{state}: {st} {doc}")
    st, _, _, doc = get(MR + f"/registered_models/{m['id']}")
    expect(doc["data"]["state"] == "LIVE" and doc["data"]["name"] == name, doc)
    st, _, _, doc = write("PATCH", MR + f"/model_versions/{v['id']}",
                          {"data": {"state": "ARCHIVED"}})
    expect(st == 200 and doc["data"]["state"] == "ARCHIVED", doc)


def test_registry_validation_errors_keep_their_message():
    st, _, _, doc = write("POST", MR + "/registered_models", {"data": {"name": "dup"}})
    expect(st == 201, doc)
    err = expect_error(write("POST", MR + "/registered_models", {"data": {"name": "dup"}}), 409,
                       "registry", "already exists")
    expect_error(get(MR + "/registered_models/999999"), 404, "registry")
    expect_error(write("POST", MR + "/registered_models", {"data": {"name": ""}}), 422, "registry")


def test_bad_bodies():
    h = {**USER, "X-CSRF-Token": csrf()}
    expect_error(call(ui.port, "POST", MR + "/registered_models", raw_body=b"{not json",
                      headers={**h, "Content-Type": "application/json"}), 400, "ui", "not JSON")
    expect_error(write("POST", MR + "/registered_models", {"name": "no-envelope"}), 400, "ui",
                 "data")
    big = b'{"data":{"name":"' + b"x" * (1024 * 1024 + 10) + b'"}}'
    c = http.client.HTTPConnection("127.0.0.1", ui.port, timeout=HANG)
    c.putrequest("POST", MR + "/registered_models")
    for k, v in {**h, "Content-Type": "application/json", "Content-Length": str(len(big))}.items():
        c.putheader(k, v)
    c.endheaders()
    try:
        c.send(big)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may answer before it has read everything
    r = c.getresponse()
    raw = r.read()
    c.close()
    doc = json.loads(raw)
    expect(r.status == 413 and doc["error"]["code"] == "413" and "1 MiB" in
           doc["error"]["message"], f"{r.status} {raw[:200]!r}")


def test_unknown_routes_and_methods():
    expect_error(get("/api/v1/nope"), 404, "ui")
    expect_error(get("/api/v1/model_registry/other/registered_models"), 404, "ui", "other")
    expect_error(call(ui.port, "DELETE", MR + "/registered_models/1",
                      headers={**USER, "X-CSRF-Token": csrf()}), 405, "ui")
    expect_error(get(MR + "/registered_models?pageSize=5000"), 400, "ui", "pageSize")
    expect_error(get(MR + "/registered_models?pageSize=0"), 400, "ui", "pageSize")
    # a filterQuery is bounded by the request target (8 KiB, the http layer's 414)
    # (in the BFF's error envelope, as every refusal of the http layer)
    expect_error(get(MR + "/registered_models?filterQuery=" + "a" * (9 * 1024)), 414, "ui",
                 "8192 bytes")


def test_header_and_query_limits():
    expect_error(get("/api/v1/user", {"X-Big": "b" * (40 * 1024)}), 431, "ui", "32 KiB")
    expect_error(get("/api/v1/user?" + "&".join(f"k{i}=v" for i in range(300))), 414, "ui",
                 "256 query parameters")


def test_etag_and_304():
    st, h, raw, _ = get(MR + "/registered_models?pageSize=5")
    expect(st == 200 and h["etag"].startswith('W/"'), h)
    expect(h["cache-control"] == "no-cache, private", h)
    st2, h2, raw2, _ = get(MR + "/registered_models?pageSize=5", {"If-None-Match": h["etag"]})
    expect(st2 == 304 and raw2 == b"", f"{st2} {raw2!r}")
    expect(h2["etag"] == h["etag"], h2)
    st3, _, _, _ = get(MR + "/registered_models?pageSize=6", {"If-None-Match": h["etag"]})
    expect(st3 == 200, st3)


def test_paging_10000_models():
    # created straight at the registry, over one keep-alive connection
    c = http.client.HTTPConnection("127.0.0.1", registry.port, timeout=HANG)
    for i in range(10000):
        c.request("POST", "/api/model_registry/v1alpha3/registered_models",
                  body=json.dumps({"name": f"bulk-{i:05d}"}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        expect(r.status == 201, f"create bulk-{i}: {r.status}")
    c.close()
    st, _, _, doc = get(MR + "/registered_models")
    d = doc["data"]
    expect(st == 200 and len(d["items"]) == 100 and d["pageSize"] == 100, "default page of 100")
    expect(d["nextPageToken"], "a next page")
    seen, token, pages = set(), "", 0
    while True:
        q = "?pageSize=1000&orderBy=ID&sortOrder=ASC" + (f"&nextPageToken={token}" if token else "")
        st, _, raw, doc = get(MR + "/registered_models" + q)
        expect(st == 200, f"page {pages}: {st} {raw[:200]!r}")
        items = doc["data"]["items"]
        expect(len(items) <= 1000, f"page of {len(items)}")
        seen.update(m["id"] for m in items)
        pages += 1
        token = doc["data"]["nextPageToken"]
        if not token or not items:
            break
        expect(pages < 50, "paging does not end")
    bulk = sum(1 for _ in seen)
    expect(bulk >= 10000 and pages >= 10, f"{bulk} models in {pages} pages")


def test_catalog_routes():
    st, _, _, doc = get("/api/v1/model_catalog/sources")
    expect(st == 200 and any(s["id"] == "acme_models" for s in doc["data"]["items"]), doc)
    st, _, _, doc = get("/api/v1/model_catalog/models?source=acme_models&pageSize=2")
    expect(st == 200 and len(doc["data"]["items"]) <= 2, doc)
    st, _, _, doc = get("/api/v1/model_catalog/models/filter_options")
    expect(st == 200 and "filters" in doc["data"], doc)
    st, _, _, doc = get("/api/v1/model_catalog/sources/acme_models/models/acme/granite-8b-code")
    expect(st == 200 and doc["data"]["name"] == "acme/granite-8b-code", f"{st} {doc}")
    st, _, _, doc = get("/api/v1/model_catalog/sources/acme_models/artifacts/acme/granite-8b-code")
    expect(st == 200 and "items" in doc["data"], f"{st} {doc}")
    st, _, _, doc = get(
        "/api/v1/model_catalog/sources/acme_models/performance_artifacts/acme/granite-8b-code")
    expect(st == 200 and "items" in doc["data"], f"{st} {doc}")
    expect_error(get("/api/v1/model_catalog/sources/acme_models/models/nope"), 404, "catalog")


def test_mcp_catalog_routes():
    """Issue 26 item 8: upstream's /api/v1/mcp_catalog paths, forwarded to the catalog's MCP API."""
    st, _, _, doc = get("/api/v1/mcp_catalog/mcp_servers?includeTools=true&toolLimit=1")
    items = doc["data"]["items"] if st == 200 else []
    expect(st == 200 and len(items) == 2 and all(len(i.get("tools", [])) == 1 for i in items),
           f"{st} {doc}")
    st, _, _, doc = get("/api/v1/mcp_catalog/mcp_servers?q=deploy")
    expect(st == 200 and [i["name"] for i in doc["data"]["items"]] == ["acme-deploy"], f"{st} {doc}")
    st, _, _, doc = get("/api/v1/mcp_catalog/mcp_servers_filter_options")
    expect(st == 200 and "filters" in doc["data"], f"{st} {doc}")
    sid = next(i["id"] for i in items if i["name"] == "acme-search") if items else "none"
    st, _, _, doc = get(f"/api/v1/mcp_catalog/mcp_servers/{sid}?includeTools=true")
    expect(st == 200 and len(doc["data"].get("tools", [])) == 2, f"{st} {doc}")
    st, _, _, doc = get(f"/api/v1/mcp_catalog/mcp_servers/{sid}/tools?filterQuery=name%3D%27fetch%27")
    expect(st == 200 and [t["name"] for t in doc["data"]["items"]] == ["fetch"], f"{st} {doc}")
    expect_error(get("/api/v1/mcp_catalog/mcp_servers/999999"), 404, "catalog")


def test_deployments_without_kubernetes_are_503():
    expect_error(get("/api/v1/namespaces/default/inferenceservices"), 503, "kubernetes",
                 "no Kubernetes API")


def test_transfer_jobs_without_kubernetes():
    """Model transfer jobs are Kubernetes Jobs made as the user: 503 without the API; a request's
    own faults are told first, naming the field."""
    tj = "/api/v1/model_registry/modelplane/model_transfer_jobs"
    job = {"name": "j", "jobDisplayName": "J", "namespace": "ns",
           "source": {"type": "uri", "uri": "hf://org/m"},
           "destination": {"type": "oci", "uri": "r.io/a/b", "username": "u", "password": "p"},
           "uploadIntent": "update_artifact", "modelArtifactId": "1"}
    expect_error(get(tj), 503, "kubernetes", "no Kubernetes API")
    expect_error(get(tj + "/j?jobNamespace=ns"), 503, "kubernetes", "no Kubernetes API")
    expect_error(write("POST", tj, {"data": job}), 503, "kubernetes", "no Kubernetes API")
    expect_error(get(tj + "/j"), 400, "ui", "jobNamespace")
    expect_error(get(tj + "/j/events?jobNamespace=Not_A_Namespace"), 400, "ui", "jobNamespace")
    expect_error(write("POST", tj, {"data": dict(job, destination={"type": "oci"})}), 400, "ui",
                 "destination.uri")
    expect_error(write("POST", tj, {"data": dict(job, source=[])}), 400, "ui", "source")
    expect_error(write("POST", tj, {"job": job}), 400, "ui", "{\"data\": {...}}")
    expect_error(write("PATCH", tj + "/j", {"data": {"name": "k"}}), 400, "ui", "namespace")
    expect_error(get("/api/v1/model_registry/other/model_transfer_jobs"), 404, "ui",
                 "no model registry named 'other'")


def test_registries_and_settings_without_kubernetes():
    # the configured registry alone, in upstream's ModelRegistryModel shape
    st, _, raw, doc = get("/api/v1/model_registry")
    expect(st == 200 and [r["name"] for r in doc["data"]] == ["modelplane"], raw)
    expect(doc["data"][0]["serverAddress"] == registry.url and
           doc["data"][0]["isHttps"] is False and doc["data"][0]["isAvailable"] is True, doc)
    expect_error(get("/api/v1/model_registry?namespace=Not_A_Namespace"), 400, "ui",
                 "not a namespace name")
    expect_error(get("/api/v1/model_registry/other/registered_models"), 404, "ui",
                 "no model registry named 'other'")
    # the settings routes are Kubernetes calls as the user: 503 without it, nothing else
    for path in ("/model_registry", "/model_registry/mr-b", "/role_bindings", "/groups"):
        expect_error(get("/api/v1/settings" + path), 503, "kubernetes", "no Kubernetes API")
    expect_error(write("POST", "/api/v1/settings/role_bindings",
                       {"data": {"subjects": [{"kind": "User", "name": "x"}]}}), 503,
                 "kubernetes")
    expect_error(write("DELETE", "/api/v1/settings/role_bindings/x", None), 503, "kubernetes")
    expect_error(write("DELETE", "/api/v1/settings/role_bindings/x", None, token=False), 403,
                 "ui", "X-CSRF-Token")


class Broken(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if "registered_models" in self.path:
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"code":"Internal Server Error","message":"database is locked"}')
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"<html>not json")

    def log_message(self, *a):
        pass


def test_broken_registry_is_502_naming_it():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Broken)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    u = Server(["ui", "-l", "127.0.0.1:0", "--no-kube", "--insecure-skip-access-review",
                "--registry-url", url, "--catalog-url", catalog.url,
                "--trusted-proxy", "127.0.0.1/32"], name="ui-broken")
    try:
        err = expect_error(get(MR + "/registered_models", port=u.port), 502, "registry", url)
        expect("500" in err["message"] and "database is locked" in err["message"], err)
        expect_error(get(MR + "/model_versions/1", port=u.port), 502, "registry", url)
        st, _, _, _ = get("/api/v1/model_catalog/sources", port=u.port)
        expect(st == 200, "the catalog keeps working")
    finally:
        u.stop()
        srv.shutdown()


class ConflictingApi(http.server.BaseHTTPRequestHandler):
    """A Kubernetes API server whose catalog sources ConfigMap another writer changes (PUT: 409
    Conflict) or creates (POST: 409 AlreadyExists) between the console's read and its write: the
    two races the console can only meet, never make, with a real API server."""
    user_cm = True  # the user ConfigMap exists (its replace conflicts), else its create does
    writes = []

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, message):
        self.reply(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "reason": reason, "code": code, "message": message})

    def do_GET(self):  # noqa: N802
        if self.path.endswith("/configmaps/model-catalog-sources") and self.user_cm:
            self.reply(200, {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "model-catalog-sources", "namespace": "cat",
                                          "resourceVersion": "7"},
                             "data": {"sources.yaml": "catalogs: []\n"}})
        else:
            self.status(404, "NotFound", "not found")

    def write_body(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ConflictingApi.writes.append((self.command, self.path))

    def do_PUT(self):  # noqa: N802
        self.write_body()
        self.status(409, "Conflict", 'Operation cannot be fulfilled on configmaps '
                    '"model-catalog-sources": the object has been modified; please apply your '
                    'changes to the latest version and try again')

    def do_POST(self):  # noqa: N802
        if "accessreviews" in self.path:  # whatever the console asks: allowed
            review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            self.reply(201, {**review, "status": {"allowed": True}})
            return
        self.write_body()
        self.status(409, "AlreadyExists", 'configmaps "model-catalog-sources" already exists')

    def log_message(self, *a):
        pass


def test_catalog_source_change_that_races_another_writer_is_409():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ConflictingApi)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    kc = os.path.join(T, "conflicting.kubeconfig")
    with open(kc, "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: http://127.0.0.1:{srv.server_address[1]}
users:
- name: ui
  user:
    token: t
contexts:
- name: fake
  context:
    cluster: fake
    user: ui
current-context: fake
""")
    u = Server(["ui", "-l", "127.0.0.1:0", "--kubeconfig", kc, "--insecure-skip-access-review",
                "--catalog-url", catalog.url, "--catalog-service", "cat/model-catalog",
                "--trusted-proxy", "127.0.0.1/32"], name="ui-conflict")
    new = {"data": {"id": "team_models", "name": "Team models", "type": "yaml",
                    "yaml": "source: Team\nmodels:\n- name: team/m1\n"}}
    try:
        for exists, verb in ((True, "PUT"), (False, "POST")):
            ConflictingApi.user_cm = exists
            ConflictingApi.writes = []
            err = expect_error(write("POST", "/api/v1/settings/model_catalog/source_configs", new,
                                     port=u.port), 409, "kubernetes", "changed since they were read")
            expect("model-catalog-sources" in err["message"] and "cat" in err["message"], err)
            expect([w[0] for w in ConflictingApi.writes] == [verb], ConflictingApi.writes)
    finally:
        u.stop()
        srv.shutdown()


def test_static_files():
    st, h, raw, _ = call(ui.port, "GET", "/")
    expect(st == 200 and raw == INDEX, f"{st} {raw[:80]!r}")
    expect(h["content-type"] == "text/html; charset=utf-8" and h["cache-control"] == "no-cache", h)
    csp = h["content-security-policy"]
    for part in ("default-src 'self'", "script-src 'self'", "frame-ancestors 'none'",
                 "img-src 'self' data:;",
                 "object-src 'none'"):
        expect(part in csp, f"CSP lacks {part}: {csp}")
    expect("unsafe-inline" not in csp, csp)
    expect(h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff", h)
    st, h, raw, _ = call(ui.port, "GET", "/assets/app-1a2b3c4d.js")
    expect(st == 200 and raw == APP and h["content-type"].startswith("text/javascript"), h)
    expect(h["cache-control"] == "public, max-age=31536000, immutable", h)
    expect("content-encoding" not in h, "no gzip unasked")
    st, h, raw, _ = call(ui.port, "GET", "/assets/app-1a2b3c4d.js",
                         headers={"Accept-Encoding": "gzip"})
    expect(st == 200 and h.get("content-encoding") == "gzip" and gzip.decompress(raw) == APP, h)
    st, h, raw, _ = call(ui.port, "HEAD", "/favicon.svg")
    expect(st == 200 and h["content-type"] == "image/svg+xml" and raw == b"", h)
    st, h, raw, _ = call(ui.port, "GET", "/sub/inside.svg")
    expect(st == 200 and raw == b"<svg/>", "a symlink inside the directory is served")


def test_static_refusals():
    for path in ("/../outside.txt", "/assets/../../outside.txt", "/%2e%2e/outside.txt",
                 "/escape.txt", "/up/outside.txt", "/.secret", "/assets/missing.js",
                 "/%00", "/a%5c..%5coutside.txt"):
        st, h, raw, _ = call(ui.port, "GET", path)
        expect(st in (400, 404), f"{path}: {st} {raw[:80]!r}")
        expect(b"outside the static dir" not in raw and b"hidden" not in raw, path)
    st, h, _, _ = call(ui.port, "POST", "/")
    expect(st == 405 and h.get("allow") == "GET, HEAD", f"{st} {h}")


def test_spa_fallback():
    st, h, raw, _ = call(ui.port, "GET", "/registered-models/3")
    expect(st == 200 and raw == INDEX, f"{st} {raw[:80]!r}")
    st, _, _, doc = call(ui.port, "GET", "/api/v1/unknown", headers=USER)
    expect(st == 404 and doc["error"]["code"] == "404", "API paths never fall back")


def test_missing_frontend_page_but_api_works():
    st, h, raw, _ = call(ui_secret.port, "GET", "/")
    expect(st == 503 and b"not built" in raw and h["content-type"].startswith("text/html"),
           f"{st} {raw[:100]!r}")
    expect("content-security-policy" in h, h)
    st, _, _, _ = call(ui_secret.port, "GET", "/api/v1/model_catalog/sources",
                       headers={**USER, "X-Proxy-Secret": "sekrit-123"})
    expect(st == 200, st)


def test_no_kube_without_skip_flag_refuses_registry_and_catalog():
    # Without Kubernetes nobody can be authorized: nothing is forwarded unless the operator lets
    # every signed-in user in (--insecure-skip-access-review).
    u = Server(["ui", "-l", "127.0.0.1:0", "--no-kube", "--registry-url", registry.url,
                "--catalog-url", catalog.url, "--trusted-proxy", "127.0.0.1/32"],
               name="ui-no-authz")
    try:
        for path in (MR + "/registered_models", "/api/v1/model_catalog/models"):
            err = expect_error(get(path, port=u.port), 503, "ui", "--insecure-skip-access-review")
            expect("without the Kubernetes API" in err["message"], err)
        expect_error(write("POST", MR + "/registered_models", {"data": {"name": "nope"}},
                           port=u.port), 503, "ui", "--no-kube")
        st, _, _, doc = get(MR + "/registered_models?filterQuery=name%3D%27nope%27")
        expect(st == 200 and doc["data"].get("size", 0) == 0, f"nothing was written: {doc}")
    finally:
        u.stop()


def test_registry_down_is_503_and_catalog_works():
    # last: stops the registry
    registry.stop()
    err = expect_error(get(MR + "/registered_models"), 503, "registry", registry.url)
    expect("model registry" in err["message"] and "unavailable" in err["message"], err)
    expect_error(write("POST", MR + "/registered_models", {"data": {"name": "x"}}), 503,
                 "registry")
    st, _, _, doc = get("/api/v1/model_catalog/models")
    expect(st == 200 and doc["data"]["items"], "catalog routes still work")
    catalog.stop()
    expect_error(get("/api/v1/model_catalog/sources"), 503, "catalog", catalog.url)


for t in (test_catalog_source_change_that_races_another_writer_is_409,
          test_healthcheck_needs_no_identity, test_no_identity_is_401_with_a_clear_message,
          test_user_header_from_trusted_address, test_untrusted_header_needs_the_shared_secret,
          test_bearer_without_kubernetes, test_malformed_identity_headers,
          test_write_without_csrf_is_refused, test_write_rules_content_type_and_origin,
          test_register_archive_restore_and_html_name,
          test_registry_validation_errors_keep_their_message, test_bad_bodies,
          test_unknown_routes_and_methods, test_header_and_query_limits, test_etag_and_304,
          test_paging_10000_models, test_catalog_routes, test_mcp_catalog_routes,
          test_deployments_without_kubernetes_are_503,
          test_registries_and_settings_without_kubernetes, test_transfer_jobs_without_kubernetes,
          test_broken_registry_is_502_naming_it,
          test_static_files, test_static_refusals, test_spa_fallback,
          test_missing_frontend_page_but_api_works,
          test_no_kube_without_skip_flag_refuses_registry_and_catalog,
          test_registry_down_is_503_and_catalog_works):
    tap.run(t)
tap.finish()
