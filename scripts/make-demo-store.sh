#!/usr/bin/env bash
# Builds resources/demo/runs.db: the small run store that `trainbench --screenshot` and the docs'
# pictures use. Every run in it is real: short trainings of the shipped experiments on a slice of
# Fashion-MNIST (three seeds of W1, W2, mirrored 1/2 replicas for a scaling chart, an input-bound
# run with its verdict), and load tests of the first seed's model served in fp32 and int8, with and
# without dynamic batching (the Inference page). Usage: scripts/make-demo-store.sh [build dir, default build/release]
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
cli="${1:-build/release}/app/trainbench-cli"
[[ -x "$cli" ]] || { echo "build first: $cli not found" >&2; exit 1; }
out=resources/demo/runs.db
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
db="$tmp/runs.db"
# The store's folder holds what the runs name, laid out as in the repository: copies of the
# experiment files and a link to the prepared data. A store records the paths inside its folder
# relative to it (./experiments/fmnist-mlp.json, ./data/...; docs/run-store.md, "Paths"), so the
# shipped file names no folder of this machine.
mkdir "$tmp/experiments"
cp experiments/fmnist-mlp.json experiments/fmnist-cnn.json experiments/io-bound-no-prefetch.json "$tmp/experiments/"
[[ -d data ]] && ln -s "$repo/data" "$tmp/data"
run() { "$cli" run "$tmp/$1" "${@:2}" --db "$db" -q >/dev/null; }
slice=(--set data.train_limit=12800 --set data.test_limit=2000 --set train.eval_every_steps=50)
for seed in 1 2 3; do
  run experiments/fmnist-mlp.json "${slice[@]}" --set train.epochs=3 --set seed=$seed --set name=fmnist-mlp-seed$seed \
    --set train.checkpoint_at_end=true
done
run experiments/fmnist-cnn.json "${slice[@]}" --set train.epochs=2 --set train.batch_size=64
for replicas in 1 2; do
  run experiments/fmnist-mlp.json "${slice[@]}" --set train.epochs=2 --set strategy.type=mirrored \
    --set strategy.replicas=$replicas --set strategy.threads_per_replica=1 --set name=fmnist-mlp-mirrored$replicas
done
if [[ -d data/fashion-mnist-tfrecord ]]; then
  run experiments/io-bound-no-prefetch.json --set train.max_steps=150 --set train.eval_every_steps=50
else
  echo "data/fashion-mnist-tfrecord not found (scripts/prepare-io-data.sh makes it): no input-bound run" >&2
fi
# Inference on the first seed's model: run from the store's folder, so that what the runs record
# names the store as runs.db, not a folder of this machine.
cli_abs="$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")"
( cd "$tmp"
  for precision in fp32 int8; do
    "$cli_abs" loadtest fmnist-mlp-seed1 --db runs.db -q --precision "$precision" --enable-batching false \
      --scenario concurrency --concurrency 1,2,4,8 --min-duration 1s --name "loadtest-$precision-unbatched"
    "$cli_abs" loadtest fmnist-mlp-seed1 --db runs.db -q --precision "$precision" --batch-timeout-micros 1000 \
      --max-batch-size 64 --scenario concurrency --concurrency 1,2,4,8 --min-duration 1s --name "loadtest-$precision-batched"
  done
)
# Compact and drop the write-ahead log: one self-contained file, in rollback-journal mode so that
# readers (trainbench --screenshot opens it in place, read-only) add no -wal and -shm beside it.
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE; VACUUM;"
# No path of this machine may be left in the shipped file.
local_paths=(-e "$tmp" -e "$repo")
[[ -n "${HOME:-}" && "$HOME" != / ]] && local_paths+=(-e "$HOME/")
if sqlite3 "$db" .dump | grep -F "${local_paths[@]}"; then
  echo "the demo store names folders of this machine (above): not copied to $out" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$db" "$out"
ls -l "$out"
