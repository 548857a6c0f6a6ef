#!/usr/bin/env bash
# tile-quant against onnxruntime (npm onnxruntime-node) on the bundled
# models (digits CNN, Fashion-MNIST CNN, digits transformer): output
# agreement and latency at batch 1 and 64. Installs the
# npm package into build/ort once (ONNXRUNTIME_NODE_INSTALL=skip: the CPU
# binaries come with the package).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh base node
scripts/build.sh
if [ ! -d build/ort/node_modules/onnxruntime-node ]; then
  mkdir -p build/ort
  (cd build/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit \
     --no-fund --silent onnxruntime-node)
fi
PYTHONPATH=python /usr/bin/python3 -m tq.models.ort_compare build \
  "$PWD/build/ort/node_modules"
