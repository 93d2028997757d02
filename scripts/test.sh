#!/usr/bin/env bash
# Install what is missing, build and run the whole test suite twice: optimised (release, warnings as
# errors) and under AddressSanitizer + UndefinedBehaviorSanitizer (dev). Extra arguments go to ctest.
# TRAINBENCH_TEST_PRESETS="release" runs just one. Then every fuzz target of the data parsers runs
# for TRAINBENCH_FUZZ_SECONDS (default 15; 0 skips fuzzing), see scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
for preset in ${TRAINBENCH_TEST_PRESETS:-release dev}; do
  echo "== $preset" >&2
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" "$@"
done
fuzz_seconds="${TRAINBENCH_FUZZ_SECONDS:-15}"
if [[ "$fuzz_seconds" != 0 ]]; then
  echo "== fuzz" >&2
  scripts/fuzz.sh "$fuzz_seconds"
fi
