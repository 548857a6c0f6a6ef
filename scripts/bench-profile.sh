#!/usr/bin/env bash
# Where a bundled model's time goes, per layer and per op kind
# (tq-run --profile): scripts/bench-profile.sh [MODEL] [--batch N]
# [--threads N] [--f32]; MODEL defaults to fashion_cnn, batch to 64.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh base >/dev/null
scripts/build.sh >/dev/null
PYTHONPATH=python /usr/bin/python3 -m tq.models.profile build "$@"
