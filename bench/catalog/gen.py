#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a sources file and one YAML catalog with N models (default 10000) into DIR.

Each model carries a model artifact and a performance-metrics artifact, like the demo catalogs.
Usage: gen.py DIR [N]
"""
import os
import sys

def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    os.makedirs(out, exist_ok=True)
    providers = ["Acme AI", "Stellar Labs", "Open Models", "Neural Dynamics", "Quantum Research"]
    licenses = ["apache-2.0", "mit", "llama3", "cc-by-4.0"]
    tasks = ["text-generation", "code-generation", "feature-extraction", "translation"]
    hw = ["H100", "A100", "L40S", "MI300X"]
    with open(os.path.join(out, "models.yaml"), "w") as f:
        f.write("source: Bench\nmodels:\n")
        for i in range(n):
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
    with open(os.path.join(out, "sources.yaml"), "w") as f:
        f.write("""model_catalogs:
  - id: bench
    name: Bench
    type: yaml
    labels: [Bench]
    properties:
      yamlCatalogPath: models.yaml
""")

if __name__ == "__main__":
    main()
