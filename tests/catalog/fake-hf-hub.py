#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A local stand-in for the Hugging Face hub, speaking its wire format, for the catalog's hf tests.

Serves the recorded-shape responses in tests/fixtures/catalog/hf (argv[1]):

  GET /api/whoami-v2                       200 for "Bearer hf_good", else 401
  GET /api/models?author=A&limit=N[&search=S][&cursor=C]
                                           the author's models, N per page, the next page in a
                                           Link: <...&cursor=...>; rel="next" header
  GET /api/models/{repo_id}[/revision/{rev}] model info (model-<org>--<name>.json), 404 if absent
  GET /{repo_id}/raw/{rev}/{file}          README--<org>--<name>--<file>, 404 if absent

Model repositories with files (the agent's hf:// downloads), from $FAKE_HF_FILES/<org>--<name>/:
  GET /api/models/{repo_id}/revision/{rev}[?blobs=true]
                                           "sha" (FAKE_SHA) and "siblings" [{"rfilename",
                                           "size"}]; rev must be "main" or FAKE_SHA, else 404
                                           "Invalid rev id"
  GET /{repo_id}/resolve/{rev}/{file}      the file; *.bin and *.joblib by a 302 to /_lfs/...
                                           (the hub's CDN redirect for LFS files)
  Repositories with behaviour: "hf-private/*" needs "Bearer hf_good" (401 otherwise),
  "hf-unsafe/*" lists "../evil.txt", "hf-stall/*" sends a file's headers and no body,
  "hf-trunc/*" stops a file's body short of its Content-Length.

Authors with behaviour: "bigorg" (250 generated models), "ratelimited" (the first list request is
a 429 with Retry-After: 1), "alwayslimited" (always 429), "slow" (answers after 5 s), "badjson"
(a body that is no JSON), "locked" (401), "acme-private" (models need "Bearer hf_good").
Control: POST /_fail/on and /_fail/off make every /api request answer 503; GET /_requests lists
the requests seen (method, path, authorization, user-agent). Prints "port N" once listening on
127.0.0.1 (port 0 = a free one).
"""
import base64
import hashlib
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FIXTURES = sys.argv[1]
FILES = os.environ.get("FAKE_HF_FILES", "")
FAKE_SHA = "5ea1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3"
STATE = {"fail": False, "ratelimited": 0, "requests": []}
LOCK = threading.Lock()


def fixture(name):
    path = os.path.join(FIXTURES, name)
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def big_model(i):
    return {"_id": "%024x" % i, "id": "bigorg/model-%03d" % i, "modelId": "bigorg/model-%03d" % i,
            "likes": 0, "private": False, "downloads": i, "tags": ["license:mit"],
            "pipeline_tag": "fill-mask", "createdAt": "2024-01-01T00:00:00.000Z"}


def author_models(author):
    if author == "bigorg":
        return [big_model(i) for i in range(250)]
    data = fixture("list-%s.json" % author)
    return json.loads(data) if data else []


class Hub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # headers and body are separate writes: without this, delayed ACKs cost 40 ms a request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype="application/json; charset=utf-8", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if self.path in ("/_fail/on", "/_fail/off"):
            STATE["fail"] = self.path.endswith("on")
            return self.send(200, {"fail": STATE["fail"]})
        self.send(404, {"error": "not found"})

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        auth = self.headers.get("Authorization", "")
        if url.path == "/_requests":
            with LOCK:
                return self.send(200, STATE["requests"])
        with LOCK:
            STATE["requests"].append({"method": "GET", "path": self.path, "authorization": auth,
                                      "user_agent": self.headers.get("User-Agent", "")})
        if STATE["fail"] and url.path.startswith("/api/"):
            return self.send(503, {"error": "Service Unavailable"})
        if url.path == "/api/whoami-v2":
            if auth == "Bearer hf_good":
                return self.send(200, {"type": "user", "id": "0001", "name": "tester",
                                       "auth": {"type": "access_token",
                                                "accessToken": {"displayName": "ci", "role": "read"}}})
            return self.send(401, {"error": "Invalid credentials in Authorization header"})
        if url.path == "/api/models":
            return self.list_models(q)
        if url.path.startswith("/api/models/"):
            repo = url.path[len("/api/models/"):]
            rev = None
            if "/revision/" in repo:
                repo, rev = repo.split("/revision/", 1)
            repo = urllib.parse.unquote(repo)
            if self.repo_dir(repo):
                return self.repo_info(repo, urllib.parse.unquote(rev or "main"), auth)
            return self.model_info(repo, auth)
        parts = url.path.lstrip("/").split("/")
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve(parts, auth)
        if url.path.startswith("/_lfs/"):
            return self.repo_file(urllib.parse.unquote(url.path[len("/_lfs/"):]))
        if len(parts) >= 5 and parts[2] == "raw":
            body = fixture("README--%s--%s--%s" % (parts[0], parts[1], "/".join(parts[4:])))
            if body is None:
                return self.send(404, "Entry not found", "text/plain; charset=utf-8")
            return self.send(200, body, "text/plain; charset=utf-8")
        self.send(404, {"error": "Sorry, we can't find the page you are looking for."})

    @staticmethod
    def repo_dir(repo):
        if not FILES or "/" not in repo:
            return None
        path = os.path.join(FILES, repo.replace("/", "--", 1))
        return path if os.path.isdir(path) else None

    def repo_info(self, repo, rev, auth):
        if repo.startswith("hf-private/") and auth != "Bearer hf_good":
            return self.send(401, {"error": "Invalid username or password."})
        if rev not in ("main", FAKE_SHA):
            return self.send(404, {"error": "Invalid rev id: %s" % rev},
                             headers=[("X-Error-Code", "RevisionNotFound")])
        base = self.repo_dir(repo)
        siblings = []
        for root, _, names in os.walk(base):
            for name in sorted(names):
                path = os.path.join(root, name)
                siblings.append({"rfilename": os.path.relpath(path, base),
                                 "size": os.path.getsize(path)})
        if repo.startswith("hf-unsafe/"):
            siblings.append({"rfilename": "../evil.txt", "size": 4})
        self.send(200, {"_id": "0" * 24, "id": repo, "modelId": repo, "sha": FAKE_SHA,
                        "private": repo.startswith("hf-private/"), "siblings": siblings})

    def resolve(self, parts, auth):
        repo = "/".join(parts[:2])
        rev, name = urllib.parse.unquote(parts[3]), urllib.parse.unquote("/".join(parts[4:]))
        if not self.repo_dir(repo) or rev not in ("main", FAKE_SHA):
            return self.send(404, {"error": "Entry not found"},
                             headers=[("X-Error-Code", "EntryNotFound")])
        if repo.startswith("hf-private/") and auth != "Bearer hf_good":
            return self.send(401, {"error": "Invalid username or password."})
        if name.endswith((".bin", ".joblib")):
            loc = "http://%s/_lfs/%s/%s" % (self.headers.get("Host"), repo.replace("/", "--", 1),
                                           urllib.parse.quote(name))
            return self.send(302, "", headers=[("Location", loc)])
        self.repo_file(repo.replace("/", "--", 1) + "/" + name)

    def repo_file(self, rel):
        path = os.path.normpath(os.path.join(FILES, rel))
        if not FILES or not path.startswith(os.path.normpath(FILES) + "/") or not os.path.isfile(path):
            return self.send(404, {"error": "Entry not found"})
        with open(path, "rb") as f:
            body = f.read()
        if rel.startswith("hf-stall--"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            time.sleep(10)
            self.close_connection = True
            return None
        if rel.startswith("hf-trunc--"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.close_connection = True
            return None
        self.send(200, body, "application/octet-stream",
                  headers=[("X-Linked-Etag", '"%s"' % hashlib.sha256(body).hexdigest())])

    def list_models(self, q):
        author = q.get("author", "")
        limit = int(q.get("limit", "100"))
        if author == "slow":
            time.sleep(5)
            return self.send(200, [])
        if author == "badjson":
            return self.send(200, "[{\"id\": \"badjson/x\", ")
        if author == "locked":
            return self.send(401, {"error": "Invalid username or password."})
        if author == "alwayslimited":
            return self.send(429, {"error": "Too Many Requests"}, headers=[("Retry-After", "1")])
        if author == "ratelimited":
            with LOCK:
                STATE["ratelimited"] += 1
                first = STATE["ratelimited"] == 1
            if first:
                return self.send(429, {"error": "Too Many Requests"}, headers=[("Retry-After", "1")])
            return self.send(200, [{"id": "ratelimited/model-a", "modelId": "ratelimited/model-a"}])
        models = author_models(author)
        search = q.get("search", "").lower()
        if search:
            models = [m for m in models if search in m["id"].lower()]
        start = int(base64.urlsafe_b64decode(q["cursor"]).decode()) if "cursor" in q else 0
        page = models[start:start + limit]
        headers = []
        if start + limit < len(models):
            cursor = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
            nxt = "http://%s/api/models?author=%s&limit=%d&cursor=%s" % (
                self.headers.get("Host"), urllib.parse.quote(author), limit, cursor)
            headers.append(("Link", '<%s>; rel="next"' % nxt))
        self.send(200, page, headers=headers)

    def model_info(self, repo, auth):
        org, _, name = repo.partition("/")
        if org == "bigorg":
            i = int(name.split("-")[-1])
            m = big_model(i)
            m.update({"author": "bigorg", "lastModified": "2024-02-01T00:00:00.000Z",
                      "siblings": [{"rfilename": "config.json"}]})
            return self.send(200, m)
        if org == "ratelimited":
            return self.send(200, {"id": repo, "author": org, "siblings": []})
        if org == "badjson":
            return self.send(200, "{\"id\": ")
        if org == "acme-private" and auth != "Bearer hf_good":
            return self.send(401, {"error": "Invalid username or password."})
        body = fixture("model-%s--%s.json" % (org, name))
        if body is None:
            return self.send(404, {"error": "Repository not found"})
        self.send(200, body)


def main():
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    srv = ThreadingHTTPServer(("127.0.0.1", port), Hub)
    srv.daemon_threads = True
    print("port %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
