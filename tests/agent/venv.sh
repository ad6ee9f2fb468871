#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Creates or reuses the agent test's virtualenv (MLServer + its scikit-learn runtime + moto's S3
# server, pinned) under ${XDG_CACHE_HOME:-~/.cache}/modelplane/venv-agent and prints its path.
# Exits 77 (skip) with a named reason when it cannot be created (no python3-venv, no PyPI).
set -euo pipefail
MLSERVER_VERSION=1.7.1
MOTO_VERSION=5.1.4
SKLEARN_VERSION=1.5.2
venv=${XDG_CACHE_HOME:-$HOME/.cache}/modelplane/venv-agent
stamp="mlserver==$MLSERVER_VERSION mlserver-sklearn==$MLSERVER_VERSION scikit-learn==$SKLEARN_VERSION moto[server]==$MOTO_VERSION"
if [ ! -f "$venv/.stamp" ] || [ "$(cat "$venv/.stamp")" != "$stamp" ]; then
        mkdir -p "$(dirname "$venv")"
        exec 9>"$venv.lock"
        flock 9
        if [ ! -f "$venv/.stamp" ] || [ "$(cat "$venv/.stamp")" != "$stamp" ]; then
                rm -rf "$venv"
                python3 -m venv "$venv" >&2 || { echo "SKIP: python3 -m venv failed (install python3-venv)" >&2; exit 77; }
                # shellcheck disable=SC2086
                "$venv/bin/pip" install -q $stamp >&2 ||
                        { rm -rf "$venv"; echo "SKIP: pip could not install $stamp" >&2; exit 77; }
                echo "$stamp" >"$venv/.stamp"
        fi
fi
echo "$venv"
