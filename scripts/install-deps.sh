#!/usr/bin/env bash
# Installs the Debian 12 packages trainbench needs, and only those missing (so a second run is a no-op).
# Usage: scripts/install-deps.sh [--bench]   (--bench adds the PyTorch peer for bench/compare.py)
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config
  libdnnl-dev            # oneDNN: the engine's kernels
  ocl-icd-opencl-dev     # Debian's dnnl-config.cmake does find_package(OpenCL REQUIRED); only a Recommends of libdnnl-dev
  libsqlite3-dev sqlite3 # run store
  zlib1g-dev             # gzip'd IDX files
  nlohmann-json3-dev     # experiment files
  libcli11-dev           # command line
  libgtest-dev           # tests
  libprotobuf-dev protobuf-compiler  # tf.train.Example payloads of TFRecord files
  libonnx-dev            # ONNX export/import (engine/onnx): onnx-ml.proto's classes
  libpng-dev libjpeg62-turbo-dev     # image-folder sources (PNG, JPEG)
  libgloo-dev            # multi_worker collectives (Gloo, TCP transport)
  libopenmpi-dev openmpi-bin  # strategy.collective "mpi": Open MPI (shared memory on one host) and mpirun
  libboost-dev           # Boost.Asio (header-only): the multi_worker rendezvous store
  clang libclang-rt-14-dev           # libFuzzer targets for the record, IDX and CSV parsers
  dataset-fashion-mnist  # the default data: /usr/share/datasets/fashion-mnist
  qt6-base-dev qt6-charts-dev qt6-svg-dev  # the GUI (Widgets, Charts), SVG icons, reports (PDF, SVG)
  libgl-dev libqt6opengl6-dev  # Qt6Gui's CMake package looks for OpenGL; Qt6Charts' needs Qt6OpenGL
  fonts-dejavu-core      # text in windows, screenshots and PDF reports on the offscreen platform
  python3-onnx           # tests: exported models pass onnx.checker and shape inference (tests/data/onnx/check_export.py)
  python3 python3-yaml   # tests: generated Kubeflow manifests are read back by a real YAML parser (PyYAML)
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3 python3-numpy python3-torch libopenblas0-openmp hyperfine)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
