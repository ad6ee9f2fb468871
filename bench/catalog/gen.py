#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a sources file and YAML catalogs with N models (default 10000) into DIR.

Each model carries a model artifact and a performance-metrics artifact, like the demo catalogs.
Models go 10,000 to a file (one source each: bench, bench-2, bench-3, ...), since one catalog
file is limited to 64 MiB (src/catalog/limits.h); the first source always holds model 0..9999.
Usage: gen.py DIR [N]
"""
import os
import sys

PER_FILE = 10000

def write_models(f, first, last):
    providers = ["Acme AI", "Stellar Labs", "Open Models", "Neural Dynamics", "Quantum Research"]
    licenses = ["apache-2.0", "mit", "llama3", "cc-by-4.0"]
    tasks = ["text-generation", "code-generation", "feature-extraction", "translation"]
    hw = ["H100", "A100", "L40S", "MI300X"]
    f.write("source: Bench\nmodels:\n")
    for i in range(first, last):
        p = providers[i % len(providers)]
        f.write(f"""  - name: {p.split()[0].lower()}/model-{i:05d}-{'instruct' if i % 3 else 'base'}
    description: Benchmark model number {i}, a {tasks[i % 4]} model by {p}.
    provider: {p}
    license: {licenses[i % 4]}
    libraryName: transformers
    language: [en]
    tasks: [{tasks[i % 4]}]
    createTimeSinceEpoch: "{1736000000000 + i * 1000}"
    lastUpdateTimeSinceEpoch: "{1737000000000 + i * 1000}"
    customProperties:
      model_type:
        metadataType: MetadataStringValue
        string_value: {'generative' if i % 2 else 'embedding'}
    artifacts:
      - uri: oci://registry.example.com/bench/model-{i:05d}:1.0
      - artifactType: metrics-artifact
        metricsType: performance-metrics
        customProperties:
          hardware_type:
            metadataType: MetadataStringValue
            string_value: {hw[i % 4]}
          hardware_count:
            metadataType: MetadataIntValue
            int_value: "{1 + i % 8}"
          ttft_p90:
            metadataType: MetadataDoubleValue
            double_value: {20 + (i * 37) % 400}.5
""")

def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    os.makedirs(out, exist_ok=True)
    sources = []
    for k, first in enumerate(range(0, max(n, 1), PER_FILE)):
        sid = "bench" if k == 0 else f"bench-{k + 1}"
        fname = "models.yaml" if k == 0 else f"models-{k + 1}.yaml"
        with open(os.path.join(out, fname), "w") as f:
            write_models(f, first, min(n, first + PER_FILE))
        sources.append((sid, fname))
    with open(os.path.join(out, "sources.yaml"), "w") as f:
        f.write("model_catalogs:\n")
        for sid, fname in sources:
            f.write(f"""  - id: {sid}
    name: {sid.capitalize()}
    type: yaml
    labels: [Bench]
    properties:
      yamlCatalogPath: {fname}
""")

if __name__ == "__main__":
    main()
