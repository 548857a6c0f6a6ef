"""tq.train: a short quantized run on the digits through tq-train, its log
and trained model (which tq.compile runs at the logged accuracy), and
tq-train's refusals as TQError."""
import os

import numpy as np
import pytest

import tq

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
pytestmark = pytest.mark.skipif(not os.path.exists(DIGITS),
                                reason="sklearn's digits (scripts/install-deps.sh train)")


def test_train_digits(models, tools, tmp_path):
    out = str(tmp_path / "trained.onnx")
    run = tq.train(os.path.join(models, "digits_cnn.onnx"), data="digits",
                   epochs=2, init="model", seed=3, lr=0.01, quantize=dict(tile=8, bits=8),
                   output=out, tool=os.path.join(tools, "tq-train"))
    assert [e["epoch"] for e in run.log["epochs"]] == [1, 2]
    assert run.log["step"] == "quantized"
    assert all(0 < e["loss"] < 0.5 for e in run.log["epochs"])
    assert run.test_accuracy >= 90 and run.model == out
    # The trained model, compiled in float, scores what tq-train logged (its
    # evaluation ran the quantized predict, so allow a point).
    # tq-train's test split: every fifth row of scikit-learn's CSV.
    import gzip
    rows = np.loadtxt(gzip.open(DIGITS), delimiter=",")[::5]
    x = (rows[:, :64] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = rows[:, 64].astype(np.int64)
    model = tq.compile(out, dims={"batch": len(x)}, quantize=False)
    acc = 100 * float((model(image=x)["logits"].argmax(1) == y).mean())
    assert abs(acc - run.test_accuracy) <= 1.0


def test_errors(models, tools):
    with pytest.raises(tq.TQError, match="unknown dataset 'nosuch'"):
        tq.train(os.path.join(models, "digits_cnn.onnx"), data="nosuch",
                 tool=os.path.join(tools, "tq-train"))
    with pytest.raises(tq.TQError, match="--lr must be positive"):
        tq.train(os.path.join(models, "digits_cnn.onnx"), data="digits", lr=0,
                 tool=os.path.join(tools, "tq-train"))
