#!/usr/bin/env bash
# The training table of docs/Training.md: tq-train (f32, 8-bit, 4->8-bit
# schedule, adaptive) against Debian's torch fp32 from the same
# initialization and data order, and the step time against torch's step and
# onnxruntime's forward, measured in one run (python/tq/models/train_compare.py).
#   scripts/bench-train.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh base node train >/dev/null
scripts/build.sh >/dev/null
PYTHONPATH=python /usr/bin/python3 -m tq.models.train_compare build/bin "$@"
