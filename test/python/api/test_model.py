"""tq.compile and tq.Model: the Fashion CNN compiled in process and called
by ONNX name; the same bits as the command-line tools; the PPU target; the
profile; and the errors a user gets."""
import os
import subprocess
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import tq
from tq.models import fashion

N = 256


@pytest.fixture(scope="module")
def data():
    return fashion.load("t10k", N)


@pytest.fixture(scope="module")
def quantized(models):
    return tq.compile(os.path.join(models, "fashion_cnn.onnx"),
                      dims={"batch": N}, quantize=dict(tile=16, bits=8),
                      profile=True)


def test_three_lines(models, data):
    x, y = data
    # The README's three lines.
    model = tq.compile(f"{models}/fashion_cnn.onnx", dims={"batch": N})
    logits = model(image=x)["logits"]
    assert logits.shape == (N, 10) and logits.dtype == np.float32
    assert (logits.argmax(1) == y).mean() >= 0.85


def test_signature_by_onnx_name(quantized):
    assert quantized.inputs == {"image": ((N, 1, 28, 28), np.float32)}
    assert quantized.outputs == {"logits": ((N, 10), np.float32)}
    assert set(quantized.phases) == {"import", "quantize", "compile"}
    assert "tq.conv2d" in quantized.program  # it was quantized


def test_same_bits_as_the_tools(quantized, data, tools, tmp_path):
    x, _ = data
    mlir, xin, out = (str(tmp_path / n) for n in ("m.mlir", "x.npy", "y.npy"))
    subprocess.run([os.path.join(tools, "tq-compile"), quantized.path,
                    f"--dim=batch={N}", "--quantize=tile=16 act-bits=8 weight-bits=8",
                    "-o", mlir, "--name=model"], check=True, capture_output=True)
    np.save(xin, x)
    subprocess.run([os.path.join(tools, "tq-run"), mlir, "--entry=model",
                    "--input", xin, "--output", out], check=True,
                   capture_output=True)
    assert quantized(x)["logits"].tobytes() == np.load(out).tobytes()


def test_float_model_matches_onnxruntime(models, data, ort):
    if ort is None:
        pytest.skip("onnxruntime not fetched (scripts/fetch-models.sh)")
    x, _ = data
    path = os.path.join(models, "fashion_cnn.onnx")
    ours = tq.compile(path, dims={"batch": N}, quantize=False)(x)["logits"]
    outs, _ = ort.run(path, {"image": x})
    ref = outs["logits"]
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)


def test_ppu_same_bits_as_cpu(models, quantized, data):
    x, _ = data
    ppu = tq.compile(os.path.join(models, "fashion_cnn.onnx"), dims={"batch": N},
                     quantize=dict(tile=16, bits=8), target="ppu")
    assert ppu(x)["logits"].tobytes() == quantized(x)["logits"].tobytes()
    stats = ppu.ppu_stats()
    kernels = len(stats["kernels"])
    assert kernels >= 1 and stats["launches"] == kernels
    assert stats["stats"]["mac_ops"] > 0 and stats["stats"]["cycles"] > 0
    ppu.reset()
    assert ppu.ppu_stats()["launches"] == 0
    with pytest.raises(tq.TQError, match="no report 'profile'"):
        ppu.profile()


def test_profile(quantized, data):
    x, _ = data
    quantized.reset()
    quantized(x)
    p = quantized.profile()
    layers = {r["layer"] for r in p["layers"]}
    # The ONNX node names; a kernel that applies the ReLU after it names both.
    assert {"/3/Conv", "/7/Gemm+/8/Relu", "/9/Gemm"} <= layers
    assert sum(r["share"] for r in p["layers"]) == pytest.approx(1.0)
    assert sum(r["share"] for r in p["kinds"]) == pytest.approx(1.0)
    assert "tq.conv2d" in {r["kind"] for r in p["kinds"]}
    assert p["total_ms"] > 0


def two_outputs(path):
    """y = tanh(x W), s = sigmoid(y): two outputs by name."""
    w = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]),
         helper.make_node("Tanh", ["m"], ["y"]),
         helper.make_node("Sigmoid", ["y"], ["s"])],
        "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten())])
    onnx.save(helper.make_model(graph), path)
    return w


def test_outputs_by_name(tmp_path):
    path = str(tmp_path / "two.onnx")
    w = two_outputs(path)
    model = tq.compile(path, shapes={"x": (5, 4)}, quantize=False)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    out = model(x=x)
    assert list(out) == ["y", "s"]
    y = np.tanh(x.astype(np.float64) @ w)
    np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["s"], 1 / (1 + np.exp(-y)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m(), TypeError, "missing input(s): image"),
    (lambda m: m(picture=np.zeros((2, 1, 28, 28))), TypeError,
     "no input 'picture' (its inputs: image)"),
    (lambda m: m(np.zeros((3, 1, 28, 28))), ValueError,
     "compiled for (2, 1, 28, 28)"),
    (lambda m: m(np.zeros((2, 1, 28, 28), np.complex64)), TypeError,
     "is complex64; the model takes float32"),
    (lambda m: m(np.zeros((2, 1, 28, 28)), np.zeros(1)), TypeError,
     "takes 1 inputs (image), got 2"),
])
def test_call_errors(models, call, error, message):
    model = tq.compile(os.path.join(models, "fashion_cnn.onnx"), dims={"batch": 2})
    with pytest.raises(error) as e:
        call(model)
    assert message in str(e.value)


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "symbolic dimension 'batch'"),
    (dict(dims={"batch": 2}, quantize=dict(tile=0)), "tile must be positive"),
    (dict(dims={"batch": 2}, quantize=dict(nosuch=1)), "no such option nosuch"),
    (dict(dims={"batch": 2}, target="arm"), "unknown target 'arm'"),
    (dict(dims={"batch": 2}, target="ppu", profile=True), "does not apply to target ppu"),
    (dict(dims={"batch": 2}, machine="v=16"), "a machine is for target ppu"),
    (dict(dims={"batch": 2, "seq": 2}), "no graph input has a symbolic dimension 'seq'"),
])
def test_compile_errors(models, kwargs, message):
    with pytest.raises(tq.TQError) as e:
        tq.compile(os.path.join(models, "fashion_cnn.onnx"), **kwargs)
    assert message in str(e.value)


def test_missing_model(tmp_path):
    with pytest.raises(tq.TQError, match="cannot open"):
        tq.compile(str(tmp_path / "absent.onnx"))


def test_non_finite_inputs_warn(models):
    path = os.path.join(models, "fashion_cnn.onnx")
    x = np.zeros((2, 1, 28, 28), np.float32)
    x[0, 0, 3, 4] = np.nan
    with pytest.warns(RuntimeWarning, match="NaN or infinite values"):
        out = tq.compile(path, dims={"batch": 2})(image=x)["logits"]
    assert out.shape == (2, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the float model does not warn
        assert np.isnan(tq.compile(path, dims={"batch": 2}, quantize=False)(image=x)["logits"][0]).all()


def test_read_only_and_adaptive(models):
    path = os.path.join(models, "fashion_cnn.onnx")
    model = tq.compile(path, dims={"batch": 2}, quantize=dict(tile=16, bits=8))
    x = np.zeros((2, 1, 28, 28), np.float32)
    x.setflags(write=False)  # inputs are only read
    assert model(image=x)["logits"].shape == (2, 10)
    # bits under policy="adaptive" is the largest width searched.
    adaptive = tq.compile(path, dims={"batch": 2},
                          quantize=dict(tile=16, bits=8, policy="adaptive"))
    assert "tq.adaptive_bit_width" in adaptive.program
    # What tq-opt refuses, tq.compile refuses.
    with pytest.raises(tq.TQError, match="weight-bits has no effect with policy=adaptive"):
        tq.compile(path, dims={"batch": 2}, quantize="policy=adaptive weight-bits=4")
