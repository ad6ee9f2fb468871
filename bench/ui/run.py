#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/ui/run.py [N] — the BFF's latency for list calls, side by side with the upstream it
forwards to (same machine, same run, interleaved request by request, keep-alive connections).

Starts a real `modelplane registry` (SQLite, 1,000 registered models) and `modelplane catalog`
(the test catalog) and `modelplane ui` in front (no Kubernetes), then times N (default 2000)
GETs of each list through the ui and straight at the upstream, and prints p50/p90/p99/max in ms
and the ratio ui/upstream. Run from the source tree after `ninja -C build`."""
import http.client
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "ui"))
os.environ.setdefault("MODELPLANE_BUILD_ROOT", os.path.join(HERE, "..", "..", "build"))
os.environ.setdefault("MODELPLANE_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
import tempfile  # noqa: E402

from uitest import SRC, Server  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
T = tempfile.mkdtemp(prefix="bench-ui-")
reg = Server(["registry", "-p", "0", "-d", os.path.join(T, "mr.db")], name="registry")
cat = Server(["catalog", "-l", "127.0.0.1:0", "--catalogs-path",
              os.path.join(SRC, "tests/fixtures/catalog/sources.yaml")], name="catalog")
ui = Server(["ui", "-l", "127.0.0.1:0", "--no-kube", "--insecure-skip-access-review",
             "--registry-url", reg.url, "--catalog-url",
             cat.url, "--trusted-proxy", "127.0.0.1/32", "--log-level", "warn"], name="ui")
try:
    c = http.client.HTTPConnection("127.0.0.1", reg.port)
    for i in range(1000):
        c.request("POST", "/api/model_registry/v1alpha3/registered_models",
                  body=json.dumps({"name": f"m-{i:04d}", "description": "bench model"}),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        assert r.status == 201, r.status

    cases = [
        ("registered_models pageSize=100",
         (ui.port, "/api/v1/model_registry/modelplane/registered_models?pageSize=100"),
         (reg.port, "/api/model_registry/v1alpha3/registered_models?pageSize=100")),
        ("catalog models pageSize=20",
         (ui.port, "/api/v1/model_catalog/models?pageSize=20"),
         (cat.port, "/api/model_catalog/v1alpha1/models?pageSize=20")),
    ]
    hdr = {"kubeflow-userid": "bench"}
    conns = {}

    def timed(port, path):
        conn = conns.setdefault(port, http.client.HTTPConnection("127.0.0.1", port))
        t0 = time.perf_counter()
        conn.request("GET", path, headers=hdr)
        r = conn.getresponse()
        r.read()
        dt = time.perf_counter() - t0
        assert r.status == 200, (path, r.status)
        return dt

    def pct(v, p):
        s = sorted(v)
        return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))] * 1000

    load = os.getloadavg()
    print(f"bench/ui: {N} requests per target, interleaved; load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'list':34} {'target':9} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}  (ms)")
    for name, via_ui, direct in cases:
        for _ in range(50):  # warm-up: connections, pools, page cache
            timed(*via_ui)
            timed(*direct)
        a, b = [], []
        for _ in range(N):
            a.append(timed(*via_ui))
            b.append(timed(*direct))
        for label, v in (("ui (BFF)", a), ("upstream", b)):
            print(f"{name:34} {label:9} {pct(v, 50):7.2f} {pct(v, 90):7.2f} {pct(v, 99):7.2f} "
                  f"{max(v) * 1000:7.2f}")
        print(f"{name:34} {'ratio':9} {pct(a, 50) / pct(b, 50):7.2f} {pct(a, 90) / pct(b, 90):7.2f} "
              f"{pct(a, 99) / pct(b, 99):7.2f}")
finally:
    ui.stop()
    cat.stop()
    reg.stop()
