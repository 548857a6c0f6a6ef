#!/usr/bin/env bash
# Compile time per phase (import, quantize, tq-to-cpu, LLVM optimize, LLVM
# code generation) for synthetic networks of growing size, the bundled
# models and, when fetched, the published ones (tq.models.compile_time).
# Prints the markdown table docs/ONNX.md shows.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh base >/dev/null
scripts/build.sh >/dev/null
scripts/fetch-models.sh >/dev/null 2>&1 ||
  echo "bench-compile: the published models are not fetched; their rows are left out" >&2
PYTHONPATH=python /usr/bin/python3 -m tq.models.compile_time build
