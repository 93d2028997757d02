#!/usr/bin/env bash
# The main job: install what is missing, build in release mode, train the default experiment
# (W1, fmnist-mlp) and say where its results are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
db="${TRAINBENCH_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/trainbench/runs.db}"
build/release/app/trainbench-cli run experiments/fmnist-mlp.json --db "$db" "$@"
echo "all runs: build/release/app/trainbench-cli runs --db $db"
echo "the window: build/release/ui/trainbench --db $db"
