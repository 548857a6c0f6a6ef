#!/usr/bin/env bash
# Installs the Debian packages tile-quant needs, only those that are missing
# (idempotent; a no-op taking a second when everything is present).
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ pkgconf ccache
  llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-onnx python3-numpy python3-psutil
  libgtest-dev libdnnl-dev libopenblas-dev libomp-22-dev libonnx-testdata
  dataset-fashion-mnist
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
