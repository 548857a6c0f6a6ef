"""Quantized training from Python: tq.train runs the tq-train driver (the
training step tq-training-step derives, compiled for this CPU) and returns
its log and the trained model.

    run = tq.train("models/digits_cnn.onnx", data="digits", epochs=10,
                   quantize=dict(tile=8, bits=8))
    run.test_accuracy, run.log["epochs"], run.model   # the trained .onnx
    tq.plots.widths_over_time(run.log["epochs"])     # under policy=adaptive

Unlike tq.compile, the training loop is the tool's, in a child process;
tq-train is found through `tool`, $TQ_TRAIN, the build this package was
installed from, the build next to the compiled module, or PATH.
"""
import json
import os
import shutil
import subprocess
import tempfile

from tq.api import TQError, quantize_options

__all__ = ["train", "Training", "find_tool"]


def find_tool(name, tool=None):
    """The path of the build's tool `name` (tq-train, tq-compile, ...)."""
    if tool:
        return tool
    env = os.environ.get("TQ_" + name.split("-", 1)[1].upper().replace("-", "_"))
    if env:
        return env
    candidates = []
    try:
        from tq import _build_info  # written by setup.py
        candidates.append(os.path.join(_build_info.BIN_DIR, name))
    except ImportError:
        pass
    try:
        import _tq_native
        candidates.append(os.path.join(os.path.dirname(_tq_native.__file__),
                                       os.pardir, "bin", name))
    except ImportError:
        pass
    for c in candidates:
        if os.access(c, os.X_OK):
            return os.path.normpath(c)
    found = shutil.which(name)
    if found:
        return found
    raise TQError(f"{name} not found: build the project (scripts/build.sh) or "
                  f"set $TQ_{name.split('-', 1)[1].upper()}")


class Training:
    """A finished run: `log` (tq-train's JSON log: per epoch the loss, the
    accuracies, the time and, under policy=adaptive, the widths), `model`
    (the trained ONNX model with float weights) and `test_accuracy` (%)."""

    def __init__(self, log, model, output):
        self.log, self.model, self.output = log, model, output
        self.test_accuracy = log["test_accuracy"]

    def __repr__(self):
        return (f"<tq.Training {len(self.log['epochs'])} epochs, test accuracy "
                f"{self.test_accuracy:.2f}%, model {self.model}>")


def train(onnx_path, data, epochs=10, batch=64, lr=0.05, momentum=0.9,
          weight_decay=0.0, quantize=None, init="model", seed=0, output=None,
          limit_train=0, limit_test=0, threads=1, tool=None):
    """Trains the ONNX classifier `onnx_path` on `data` ("digits",
    "fashion-mnist" or an .npz with x_train, y_train, x_test, y_test) with
    SGD and softmax cross-entropy, quantized (`quantize`: None for
    tq-train's defaults, tq-quantize's with the gradients rounded
    stochastically, False for f32, or a dict or string of its options, as
    in tq.compile; tq-train adds grad-rounding=stochastic unless they name
    grad-rounding). `init` is "model" (its initializers) or
    "seeded". The trained model goes to `output` (default: a temporary
    file). Raises TQError with tq-train's message when it refuses."""
    work = tempfile.mkdtemp(prefix="tq-train-")
    log_path = os.path.join(work, "log.json")
    model = output or os.path.join(work, "trained.onnx")
    cmd = [find_tool("tq-train", tool), str(onnx_path), f"--data={data}",
           f"--epochs={int(epochs)}", f"--batch={int(batch)}", f"--lr={lr!r}",
           f"--momentum={momentum!r}", f"--weight-decay={weight_decay!r}",
           f"--init={init}", f"--seed={int(seed)}", f"--num-threads={int(threads)}",
           f"--limit-train={int(limit_train)}", f"--limit-test={int(limit_test)}",
           f"--log={log_path}", "-o", model]
    if quantize is False:
        cmd.append("--float")
    elif quantize is not None:
        cmd.append(f"--quantize={quantize_options(quantize)}")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        message = r.stderr.strip().splitlines()
        raise TQError(message[-1] if message else f"tq-train failed ({r.returncode})")
    with open(log_path) as f:
        log = json.load(f)
    return Training(log, model, r.stdout)
