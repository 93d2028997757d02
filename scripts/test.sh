#!/usr/bin/env bash
# Install what is missing, build and run the whole test suite twice: optimised (release, warnings as
# errors) and under AddressSanitizer + UndefinedBehaviorSanitizer (dev). Extra arguments go to ctest.
# TRAINBENCH_TEST_PRESETS="release" runs just one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
for preset in ${TRAINBENCH_TEST_PRESETS:-release dev}; do
  echo "== $preset" >&2
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" "$@"
done
