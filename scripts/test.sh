#!/usr/bin/env bash
# Install what is missing, build (release, warnings as errors) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release "$@"
