#!/usr/bin/env bash
# The report of docs/Deploy.md: `python3 -m tq report` on the Fashion CNN
# (512 Fashion-MNIST test images) into build/report/, its plots into
# docs/images/. Needs the build (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/report docs/images
export PYTHONPATH=python:build/python
/usr/bin/python3 - <<'PY'
import numpy as np
from tq.models import fashion
x, y = fashion.load("t10k", 512)
np.savez("build/report/fashion.npz", image=x, y=y)
PY
/usr/bin/python3 -m tq report models/fashion_cnn.onnx \
  --data build/report/fashion.npz -o build/report/fashion.html \
  --json build/report/fashion.json --figures build/report
cp build/report/tiles.png docs/images/report-tiles.png
cp build/report/widths.png docs/images/report-widths.png
echo "report: build/report/fashion.html; plots in docs/images/report-*.png"
