#!/usr/bin/env bash
# Retrains the bundled models with Debian's python3-torch (fixed seeds) and
# writes them into DIR (default models/):
#   digits_cnn.onnx, digits_test.npz (tq.models.digits),
#   fashion_cnn.onnx (tq.models.fashion),
#   digits_transformer.onnx (tq.models.transformer),
#   fashion_mobilenet.onnx (tq.models.mobilenet train; about 11 minutes).
# The committed models make this unnecessary for building and testing; it
# installs torch and sklearn (the "train" group) for itself.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-models}
scripts/install-deps.sh base train
mkdir -p "$dir"
for m in digits fashion transformer; do
  echo "train-models: tq.models.$m -> $dir"
  PYTHONPATH=python /usr/bin/python3 -m "tq.models.$m" "$dir"
done
echo "train-models: tq.models.mobilenet -> $dir"
PYTHONPATH=python /usr/bin/python3 -m tq.models.mobilenet train "$dir"

