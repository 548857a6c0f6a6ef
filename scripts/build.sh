#!/usr/bin/env bash
# Configures (once) and builds tile-quant in build/ with clang-22, lld, Ninja
# and ccache. Extra arguments are passed to ninja (e.g. a target name).
# With TQ_SANITIZE=1 it builds everything (tools, libraries, unit tests)
# with ASan + UBSan in build-asan/ instead; Debian's libMLIR and libLLVM are
# not instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${TQ_SANITIZE:-0}" = 1 ]; then
  dir=build-asan
  extra=(-DTQ_ENABLE_SANITIZERS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
else
  dir=build
  extra=(-DCMAKE_BUILD_TYPE=Release)
fi

if [ ! -f "$dir/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B "$dir" "${extra[@]}" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld
fi
ninja -C "$dir" "$@"
