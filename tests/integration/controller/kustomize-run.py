#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kustomize-run.py RENDERED.json DEPLOYMENT WORKDIR [SECRET_KEY=VALUE...]

Turns the first container of Deployment DEPLOYMENT in a rendered kustomize overlay (a
`kubectl create --dry-run=client -o json` List) into a local process spec, as the kubelet would
run it: env from value, configMapKeyRef and secretKeyRef (secrets given on the command line as
NAME/KEY=VALUE), envFrom configMapRef, $(VAR) expansion in args, ConfigMap volumes written out
and PVC/emptyDir volumes as empty directories under WORKDIR (mount paths rewritten in args and
env; an optional ConfigMap that does not exist as an empty directory). Only the listen addresses are changed, to loopback port 0 (shared machine). Prints JSON:
{"argv": [...], "env": {...}, "probes": [[kind, path-or-null], ...]}.
"""
import json
import os
import re
import sys

items = json.load(open(sys.argv[1]))["items"]
name, work = sys.argv[2], sys.argv[3]
secrets = dict(a.split("=", 1) for a in sys.argv[4:])
cms = {i["metadata"]["name"]: i.get("data", {}) for i in items if i["kind"] == "ConfigMap"}
dep = next(i for i in items if i["kind"] == "Deployment" and i["metadata"]["name"] == name)
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]

mounts = {}
vols = {v["name"]: v for v in pod.get("volumes", [])}
for m in c.get("volumeMounts", []):
    v, d = vols[m["name"]], os.path.join(work, m["name"])
    os.makedirs(d, exist_ok=True)
    if "configMap" in v:
        ref = v["configMap"]
        if ref["name"] not in cms and not ref.get("optional"):
            sys.exit(f"kustomize-run: volume {m['name']}: no ConfigMap {ref['name']}")
        # an optional ConfigMap that does not exist is an empty directory, as the kubelet mounts it
        for k, data in cms.get(ref["name"], {}).items():
            open(os.path.join(d, k), "w").write(data)
    elif not ("persistentVolumeClaim" in v or "emptyDir" in v):
        sys.exit(f"kustomize-run: volume {m['name']}: unsupported type")
    mounts[m["mountPath"]] = d

def remap(s):
    for path, d in mounts.items():
        s = s.replace(path + "/", d + "/")
    return s

env = {}
for ef in c.get("envFrom", []):
    env.update(cms[ef["configMapRef"]["name"]])
for e in c.get("env", []):
    if "value" in e:
        env[e["name"]] = e["value"]
    elif "configMapKeyRef" in e["valueFrom"]:
        r = e["valueFrom"]["configMapKeyRef"]
        env[e["name"]] = cms[r["name"]][r["key"]]
    else:
        r = e["valueFrom"]["secretKeyRef"]
        env[e["name"]] = secrets[f"{r['name']}/{r['key']}"]
env = {k: remap(v) for k, v in env.items()}
# listen on loopback, any free port
for k in ("MODEL_REGISTRY_REST_SERVICE_PORT",):
    if k in env:
        env[k] = "0"

def expand(a):
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), a)

argv = []
for a in [expand(x) for x in c.get("command", []) + c.get("args", [])]:
    a = remap(a)
    a = re.sub(r"^(--listen=)(0\.0\.0\.0)?:\d+$", r"\g<1>127.0.0.1:0", a)
    a = re.sub(r"^(--hostname=)0\.0\.0\.0$", r"\g<1>127.0.0.1", a)
    a = re.sub(r"^(--port=)\d+$", r"\g<1>0", a)
    argv.append(a)
probes = []
for p in ("readinessProbe", "livenessProbe"):
    if p in c:
        probes.append(["http", c[p]["httpGet"]["path"]] if "httpGet" in c[p] else ["tcp", None])
print(json.dumps({"argv": argv, "env": env, "probes": probes}))
