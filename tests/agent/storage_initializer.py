# SPDX-License-Identifier: Apache-2.0
"""`modelplane storage-initializer SRC DST` and model-registry:// URIs against a real
`modelplane registry` (SQLite) on loopback: a version by name, the latest live version (an
archived newer one skipped), the registry named in the URI, and each refusal in words (unknown
model or version, archived model or version, a version without a model artifact, an artifact that
points at model-registry:// again, ALLOWED_ARTIFACT_URI_PREFIXES, a malformed URI, a registry
that is down), with nothing left in DST after a failure."""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from agentlib import case, expect, failures, step_no

BUILD = os.environ.get("MODELPLANE_BUILD_ROOT", "build")
BIN = os.path.join(BUILD, "src", "cmd", "modelplane")
T = tempfile.mkdtemp(prefix="storage-init-")


log = open(os.path.join(T, "registry.log"), "w")
reg = subprocess.Popen([BIN, "registry", "-n", "127.0.0.1", "-p", "0", "-d",
                        os.path.join(T, "mr.db")], stdout=subprocess.PIPE, stderr=log, text=True)
line = reg.stdout.readline()
if not line.startswith("listening on "):
    reg.kill()
    print(f"Bail out! registry did not start: {line!r}")
    sys.exit(1)
PORT = int(line.strip().rsplit(":", 1)[1])
HOSTPORT = f"127.0.0.1:{PORT}"


def api(method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    c.request(method, "/api/model_registry/v1alpha3" + path,
              body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    doc = json.loads(r.read() or b"null")
    expect(r.status in (200, 201), f"{method} {path}: {r.status} {doc}")
    return doc


def model_dir(name, content):
    d = os.path.join(T, "store", name)
    os.makedirs(d)
    open(os.path.join(d, "model.joblib"), "w").write(content)
    open(os.path.join(d, "model-settings.json"), "w").write("{}")
    return d


def version(mid, name, uri=None, archived=False):
    v = api("POST", f"/registered_models/{mid}/versions",
            {"name": name, "registeredModelId": mid})
    if uri:
        api("POST", f"/model_versions/{v['id']}/artifacts",
            {"artifactType": "model-artifact", "name": f"{name}-artifact", "uri": uri})
    if archived:
        api("PATCH", f"/model_versions/{v['id']}", {"state": "ARCHIVED"})
    return v


iris = api("POST", "/registered_models", {"name": "iris"})["id"]
version(iris, "v1", model_dir("v1", "iris v1"))
version(iris, "v2", model_dir("v2", "iris v2"))
version(iris, "v3", model_dir("v3", "iris v3 archived"), archived=True)
version(iris, "old", model_dir("old", "old"), archived=True)
noart = api("POST", "/registered_models", {"name": "no-artifact"})["id"]
version(noart, "v1")
loop = api("POST", "/registered_models", {"name": "loop"})["id"]
version(loop, "v1", "model-registry://iris/v1")
gone = api("POST", "/registered_models", {"name": "retired"})["id"]
version(gone, "v1", model_dir("retired", "retired"))
api("PATCH", f"/registered_models/{gone}", {"state": "ARCHIVED"})
spaced = api("POST", "/registered_models", {"name": "fraud detector"})["id"]
version(spaced, "2026/12", model_dir("spaced", "spaced"))

ENV = {**os.environ, "MODEL_REGISTRY_BASE_URL": HOSTPORT}


def run(src, env=None):
    dst = tempfile.mkdtemp(prefix="dst-", dir=T)
    shutil.rmtree(dst)  # the command makes it
    r = subprocess.run([BIN, "storage-initializer", "--log-format", "text", src, dst],
                       capture_output=True, text=True, env=env or ENV, timeout=120)
    return r.returncode, r.stderr, dst


def downloads(src, content, env=None):
    rc, err, dst = run(src, env)
    expect(rc == 0, f"{src}: exit {rc}: {err[-600:]}")
    got = open(os.path.join(dst, "model.joblib")).read()
    expect(got == content, f"{src}: got {got!r}, want {content!r}")


def refused(src, words, env=None):
    rc, err, dst = run(src, env)
    expect(rc == 1, f"{src}: exit {rc}, want 1: {err[-600:]}")
    expect(words in err, f"{src}: {words!r} not in: {err[-600:]}")
    expect(not os.path.exists(dst) or os.listdir(dst) == [], f"{src}: {dst} not empty")


def test_a_version_by_name():
    downloads("model-registry://iris/v1", "iris v1")


def test_the_latest_live_version():
    downloads("model-registry://iris", "iris v2")  # v3 is newer but archived


def test_the_registry_named_in_the_uri():
    env = {**os.environ, "MODEL_REGISTRY_BASE_URL": "127.0.0.1:9"}  # nothing listens there
    downloads(f"model-registry://{HOSTPORT}/iris/v1", "iris v1", env)
    downloads(f"model-registry://{HOSTPORT}/iris", "iris v2", env)


def test_percent_encoded_names():
    downloads("model-registry://fraud%20detector/2026%2F12", "spaced")


def test_unknown_model_and_version():
    refused("model-registry://nope/v1", 'no registered model named "nope"')
    refused("model-registry://iris/v9", 'has no version named "v9"')


def test_archived_version_and_model():
    refused("model-registry://iris/v3", 'version "v3" of the model "iris" is archived')
    refused("model-registry://retired/v1", 'the registered model "retired" is archived')


def test_version_without_artifact():
    refused("model-registry://no-artifact/v1", "has no model artifact with a URI")


def test_artifact_pointing_at_the_registry_again():
    refused("model-registry://loop/v1", "is itself a model-registry:// URI")


def test_allowed_prefixes():
    env = {**ENV, "ALLOWED_ARTIFACT_URI_PREFIXES": "s3://models/, gs://models/"}
    refused("model-registry://iris/v1", "outside ALLOWED_ARTIFACT_URI_PREFIXES", env)
    env["ALLOWED_ARTIFACT_URI_PREFIXES"] = f"s3://x/,{T}/store/"
    downloads("model-registry://iris/v1", "iris v1", env)


def test_malformed_uris():
    refused("model-registry:///v1", "an empty segment")
    refused("model-registry://a/b/c/d", "more than three segments")
    refused("model-registry://iris%zz", "bad %-escape")


def test_registry_down_names_it():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = {**os.environ, "MODEL_REGISTRY_BASE_URL": f"127.0.0.1:{port}"}
    refused("model-registry://iris/v1", f"the model registry at http://127.0.0.1:{port}", env)


def test_namespace_parameter_names_the_registry():
    # upstream's "?namespace=NS": <MODEL_REGISTRY_SERVICE_NAME>.NS.<MODEL_REGISTRY_CLUSTER_DOMAIN>
    # at the configured registry's port; ".invalid" never resolves (RFC 6761), so the refusal
    # names the registry that was asked
    env = {**os.environ, "MODEL_REGISTRY_BASE_URL": "127.0.0.1:9",
           "MODEL_REGISTRY_SERVICE_NAME": "registry", "MODEL_REGISTRY_CLUSTER_DOMAIN": "invalid"}
    refused("model-registry://iris/v1?namespace=team-a",
            "the model registry at http://registry.team-a.invalid:9", env)
    refused("model-registry://iris/v1?namespace=team.a", "not a namespace name", env)


def test_plain_uris_and_usage():
    downloads(os.path.join(T, "store", "v1"), "iris v1")
    rc, err, _ = run("s3://")
    expect(rc == 1 and "storageUri" in err, err[-300:])
    r = subprocess.run([BIN, "storage-initializer", "only-one"], capture_output=True, text=True)
    expect(r.returncode == 2 and "expected 2 arguments (SRC DST)" in r.stderr, r.stderr)


for t in (test_a_version_by_name, test_the_latest_live_version, test_the_registry_named_in_the_uri,
          test_percent_encoded_names, test_unknown_model_and_version,
          test_archived_version_and_model, test_version_without_artifact,
          test_artifact_pointing_at_the_registry_again, test_allowed_prefixes,
          test_malformed_uris, test_registry_down_names_it,
          test_namespace_parameter_names_the_registry, test_plain_uris_and_usage):
    case(t)
reg.terminate()
reg.wait(30)
shutil.rmtree(T, ignore_errors=True)
print(f"1..{step_no[0]}")
sys.exit(1 if failures else 0)
