#!/usr/bin/env bash
# Installs the Debian packages tile-quant needs, only those that are missing
# (idempotent; a no-op taking a second when everything is present).
#
#   scripts/install-deps.sh [GROUP...]
#   scripts/install-deps.sh --list [GROUP...]   (prints the packages only)
#
# With no argument it installs the "base" group: what the build, the test
# suite (scripts/run-tests.sh) and the demo (scripts/run-demo.sh) use. A
# script that needs more names its group, for example
# `scripts/install-deps.sh base node` in scripts/bench-ort.sh. The groups
# and why each package is there are listed in docs/Install.md.
#
# Output is one line per step; apt's own output goes to a log that is
# printed only if the step fails.
set -euo pipefail

declare -A GROUPS_PKGS=(
  # Compilers, build system, LLVM/MLIR 22 and the sanitizer runtimes.
  [toolchain]="cmake ninja-build g++ pkgconf ccache
    llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
    clang-22 lld-22 libclang-rt-22-dev libomp-22-dev"
  # Libraries the project links: ONNX protobufs, zlib (tq-train's .npz and
  # gzip datasets), GoogleTest, the peers of tq-bench cpu-matmul (oneDNN,
  # OpenBLAS), and pybind11 with Python's headers (the in-process Python
  # package).
  [libs]="libonnx-dev libprotobuf-dev protobuf-compiler zlib1g-dev
    libgtest-dev libdnnl-dev libopenblas-dev pybind11-dev python3-dev"
  # Python modules of the lit suite, the numpy reference, the model
  # evaluation and the Python package's tests and report (run under
  # /usr/bin/python3), and the test data.
  [pytest]="python3 python3-onnx python3-numpy python3-psutil python3-pytest
    python3-matplotlib libonnx-testdata dataset-fashion-mnist"
  # onnxruntime comparisons (npm onnxruntime-node runs under Node.js).
  [node]="nodejs npm"
  # Retraining the bundled models (python/tq/models/*.py --train).
  [train]="python3-torch python3-sklearn"
  # Real speech for the audio models.
  [audio]="espeak-ng sox"
  # scripts/list-deps.sh --tests traces the test suite.
  [trace]="strace"
)
# Packages that a command on PATH stands for: this machine's Node.js may
# come from elsewhere (nodesource bundles npm), and Debian's npm would
# conflict with it.
declare -A PROVIDED_BY_COMMAND=([nodejs]=node [npm]=npm)
GROUPS_ORDER=(toolchain libs pytest node train audio trace)

list_only=0
if [ "${1:-}" = --list ]; then list_only=1; shift; fi
requested=("$@")
if [ ${#requested[@]} -eq 0 ]; then requested=(base); fi

packages=()
for g in "${requested[@]}"; do
  case "$g" in
  base) packages+=(${GROUPS_PKGS[toolchain]} ${GROUPS_PKGS[libs]} ${GROUPS_PKGS[pytest]}) ;;
  all) for k in "${GROUPS_ORDER[@]}"; do packages+=(${GROUPS_PKGS[$k]}); done ;;
  *)
    if [ -z "${GROUPS_PKGS[$g]+x}" ]; then
      echo "install-deps: error: unknown group '$g' (base, all, ${GROUPS_ORDER[*]})" >&2
      exit 2
    fi
    packages+=(${GROUPS_PKGS[$g]})
    ;;
  esac
done

if [ "$list_only" = 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  cmd=${PROVIDED_BY_COMMAND[$p]:-}
  if [ -n "$cmd" ] && command -v "$cmd" >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present (${requested[*]})"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp -t tq-install-deps.XXXXXX)
trap 'rm -f "$log"' EXIT

step() { # step DESCRIPTION COMMAND...: one line, the log only on failure
  local what=$1 start=$SECONDS
  shift
  printf 'install-deps: %s ... ' "$what"
  if "$@" >"$log" 2>&1; then
    echo "ok ($((SECONDS - start)) s)"
  else
    echo "FAILED"
    cat "$log" >&2
    exit 1
  fi
}

step "apt-get update" $SUDO apt-get update -q
step "installing ${#missing[@]} packages: ${missing[*]}" \
  $SUDO apt-get install -y -q --no-install-recommends \
  -o Dpkg::Use-Pty=0 "${missing[@]}"
