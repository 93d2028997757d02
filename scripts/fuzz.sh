#!/usr/bin/env bash
# Builds the libFuzzer targets of the data parsers (preset "fuzz": clang, ASan + UBSan) and runs each
# for N seconds (default 60), one after the other, on a copy of its seed corpus
# tests/data/fuzz/<target>/ (the repository is never modified). Fails if any target finds a crash,
# a sanitizer report, a leak, a timeout or runs out of memory; the log and the reproducing input are
# kept under the printed folder. Usage: scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

work=$(mktemp -d "${TMPDIR:-/tmp}/trainbench-fuzz.XXXXXX")
failed=()
for exe in build/fuzz/tests/fuzz/fuzz_*; do
  [[ -f "$exe" && -x "$exe" ]] || continue
  name=$(basename "$exe")
  mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
  if [[ -d "tests/data/fuzz/$name" ]]; then
    cp -R "tests/data/fuzz/$name/." "$work/$name/corpus/"
  fi
  echo "== $name, ${seconds}s" >&2
  if "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
       -artifact_prefix="$work/$name/artifacts/" "$work/$name/corpus" >"$work/$name/log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done ' "$work/$name/log" | tail -1 >&2
  else
    echo "FAILED: $name (log and reproducer in $work/$name)" >&2
    grep -E 'ERROR|MISMATCH|SUMMARY|^    #[0-9]' "$work/$name/log" | head -40 >&2 || tail -40 "$work/$name/log" >&2
    failed+=("$name")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi
rm -rf "$work"
