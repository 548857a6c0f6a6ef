#!/usr/bin/env bash
# The update-interval table of docs/Training.md (SPEC A6): 8-bit training
# with parameters recomputed every iteration against --update-interval, in
# one run (python/tq/models/interval_compare.py).
#   scripts/bench-interval.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh base train >/dev/null
scripts/build.sh >/dev/null
PYTHONPATH=python /usr/bin/python3 -m tq.models.interval_compare build/bin "$@"
