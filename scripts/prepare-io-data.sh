#!/usr/bin/env bash
# Converts Debian's Fashion-MNIST into the layouts the input-pipeline experiments and benchmarks read:
#   data/fashion-mnist-tfrecord/{train,test}-000NN-of-00016.tfrecord  (16 TFRecord shards per split)
#   data/fashion-mnist-1shard/{train,test}-00000-of-00001.tfrecord    (the "too few files" layout)
#   data/fashion-mnist-files/{train,test}-files/NNNNNNNN.example      (one tf.train.Example per file)
# Idempotent: a layout that is already complete is left alone. Builds trainbench-cli if needed.
# Usage: scripts/prepare-io-data.sh [data-folder]   (default: data/ in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-data}"
cli=build/release/app/trainbench-cli
if [[ ! -x "$cli" ]]; then
  scripts/install-deps.sh
  cmake --preset release >/dev/null
  cmake --build --preset release --target trainbench-cli
fi

shards="$out/fashion-mnist-tfrecord"
if [[ ! -f "$shards/test-00015-of-00016.tfrecord" ]]; then
  rm -rf "$shards"
  "$cli" convert --from fashion-mnist --to tfrecord --shards 16 "$shards"
fi
one="$out/fashion-mnist-1shard"
if [[ ! -f "$one/test-00000-of-00001.tfrecord" ]]; then
  rm -rf "$one"
  "$cli" convert --from fashion-mnist --to tfrecord --shards 1 "$one"
fi
files="$out/fashion-mnist-files"
if [[ ! -f "$files/test-files/00009999.example" ]]; then
  rm -rf "$files"
  "$cli" convert --from fashion-mnist --to files "$files"
fi
echo "input-pipeline data ready in $out/"
