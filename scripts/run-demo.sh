#!/usr/bin/env bash
# The main job: installs what is missing, builds, and shows tile-quant at
# work (tq-opt on a training step; the reference numerics on sample data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
PYTHONPATH=python /usr/bin/python3 -m tq.demo build
