#!/usr/bin/env python3
"""bench/convergence-watch.py — the convergence clock of bench/convergence.

    convergence-watch.py SERVER PKI NAMESPACE READYFILE [--ready N] [--listed N] [--tms N]
                         [--uri-contains S] [--settled N] [--timeout SEC]

Lists, then watches, the TrainedModels and the ConfigMaps of NAMESPACE over raw HTTPS (the
testenv admin certificate), and prints the Unix time at which every given condition holds:

  --ready N         exactly N TrainedModels have condition Ready=True
  --listed N        the modelconfig-* ConfigMaps' models.json hold N entries in all
  --tms N           N TrainedModels exist (0 after a delete)
  --uri-contains S  every models.json entry's storageUri contains S
  --settled N       N TrainedModels have a decided Ready (True or False), and the ConfigMaps
                    list exactly those that are Ready=True (the 1 MiB guard: what fits is
                    listed and Ready, the rest is Ready=False)

It touches READYFILE once both watches are open, so that the caller starts the clock only
then. Prints "converged=<unix time> events=<n> true=<n> false=<n>" or "timeout" (exit 3). Times are reported by
the caller, never asserted.
"""
import argparse
import http.client
import json
import ssl
import sys
import threading
import time
import urllib.parse

ap = argparse.ArgumentParser()
ap.add_argument("server")
ap.add_argument("pki")
ap.add_argument("namespace")
ap.add_argument("readyfile")
ap.add_argument("--ready", type=int)
ap.add_argument("--listed", type=int)
ap.add_argument("--tms", type=int)
ap.add_argument("--uri-contains")
ap.add_argument("--settled", type=int)
ap.add_argument("--timeout", type=float, default=600)
a = ap.parse_args()

u = urllib.parse.urlparse(a.server)
ctx = ssl.create_default_context(cafile=f"{a.pki}/ca.crt")
ctx.load_cert_chain(f"{a.pki}/admin.crt", f"{a.pki}/admin.key")

lock = threading.Condition()
ready = {}      # TrainedModel name -> Ready's status ("True", "False", "Unknown" or None)
entries = {}    # ConfigMap name -> list of (modelName, storageUri)
events = 0
failure = []


def tm_ready(o):
    for c in o.get("status", {}).get("conditions", []) or []:
        if c.get("type") == "Ready":
            return c.get("status")
    return None


def count(status):
    return sum(1 for v in ready.values() if v == status)


def cm_entries(o):
    raw = (o.get("data") or {}).get("models.json") or "[]"
    try:
        return [(e.get("modelName"), (e.get("modelSpec") or {}).get("storageUri", ""))
                for e in json.loads(raw)]
    except ValueError:
        return []


def apply(kind, typ, o):
    name = o["metadata"]["name"]
    if kind == "tm":
        if typ == "DELETED":
            ready.pop(name, None)
        else:
            ready[name] = tm_ready(o)
    elif name.startswith("modelconfig-"):
        if typ == "DELETED":
            entries.pop(name, None)
        else:
            entries[name] = cm_entries(o)


def done():
    if a.ready is not None and count("True") != a.ready:
        return False
    if a.tms is not None and len(ready) != a.tms:
        return False
    listed = [e for es in entries.values() for e in es]
    if a.listed is not None and len(listed) != a.listed:
        return False
    if a.uri_contains is not None and any(a.uri_contains not in uri for _, uri in listed):
        return False
    if a.settled is not None:
        if count("True") + count("False") != a.settled or len(listed) != count("True"):
            return False
    return True


def path(kind):
    if kind == "tm":
        return f"/apis/serving.kserve.io/v1alpha1/namespaces/{a.namespace}/trainedmodels"
    return f"/api/v1/namespaces/{a.namespace}/configmaps"


def request(p):
    # a 429 right after start ("storage is (re)initializing" of a new CRD) is retried
    for attempt in range(60):
        c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=a.timeout + 60)
        c.request("GET", p)
        r = c.getresponse()
        if r.status == 429 and attempt < 59:
            r.read()
            time.sleep(float(r.getheader("Retry-After") or 1))
            continue
        if r.status == 410 and "watch=1" in p:
            r.read()
            return None  # expired resourceVersion: list again
        if r.status != 200:
            raise RuntimeError(f"GET {p}: {r.status} {r.read()[:200]!r}")
        return r


opened = []


def watch(kind):
    """List, then watch from the list's resourceVersion; a watch the server ends (a slow
    consumer's watch is closed by the watch cache) resumes from the last event seen, and an
    expired one (410) lists again."""
    global events
    rv = None
    try:
        while True:
            if rv is None:
                lst = json.load(request(path(kind)))
                with lock:
                    state = ready if kind == "tm" else entries
                    state.clear()
                    for o in lst["items"]:
                        apply(kind, "ADDED", o)
                    lock.notify_all()
                rv = lst["metadata"]["resourceVersion"]
            r = request(f"{path(kind)}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true")
            if r is None:
                rv = None
                continue
            with lock:
                if kind not in opened:
                    opened.append(kind)
                lock.notify_all()
            while True:
                line = r.readline()
                if not line:
                    break  # resumed from rv
                ev = json.loads(line)
                if ev["type"] == "ERROR":
                    if ev["object"].get("code") == 410:
                        rv = None
                        break
                    raise RuntimeError(f"watch of {kind}: {ev['object']}")
                rv = ev["object"]["metadata"]["resourceVersion"]
                if ev["type"] == "BOOKMARK":
                    continue
                with lock:
                    apply(kind, ev["type"], ev["object"])
                    events += 1
                    lock.notify_all()
    except Exception as e:  # reported by the main thread
        with lock:
            failure.append(str(e))
            lock.notify_all()


for k in ("tm", "cm"):
    threading.Thread(target=watch, args=(k,), daemon=True).start()
deadline = time.time() + a.timeout
with lock:
    while len(opened) < 2 and not failure:
        lock.wait(1)
    if not failure:
        open(a.readyfile, "w").close()
    while not failure and not done() and time.time() < deadline:
        lock.wait(max(0.01, min(1, deadline - time.time())))
    if failure:
        print("watch failed:", failure[0], file=sys.stderr)
        sys.exit(1)
    if not done():
        print("timeout")
        sys.exit(3)
    print(f"converged={time.time():.6f} events={events} true={count('True')} false={count('False')}")
