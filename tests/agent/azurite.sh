#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installs Azurite (Microsoft's Azure Storage emulator, npm package "azurite", pinned) into
# ~/.cache/modelplane/azurite-<version> when it is not there yet, and prints its azurite-blob
# executable. Exits 77 (skip) with the reason when npm cannot install it (no npm, no registry).
set -euo pipefail
AZURITE_VERSION=3.35.0
dir=${MODELPLANE_CACHE:-$HOME/.cache/modelplane}/azurite-$AZURITE_VERSION
exe=$dir/node_modules/.bin/azurite-blob
if [ ! -x "$exe" ]; then
        command -v npm >/dev/null || { echo "SKIP: npm is not installed (needed for azurite)" >&2; exit 77; }
        mkdir -p "$dir"
        exec 9>"$dir.lock"
        flock 9
        if [ ! -x "$exe" ]; then
                npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
                        "azurite@$AZURITE_VERSION" >&2 ||
                        { echo "SKIP: npm could not install azurite@$AZURITE_VERSION" >&2; exit 77; }
        fi
fi
echo "$exe"
