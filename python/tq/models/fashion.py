"""A CNN on Fashion-MNIST (Debian's dataset-fashion-mnist: 28x28 grey
images, 10 classes), trained with python3-torch (fixed seeds, about a
minute on 2 cores) and exported to ONNX.

    /usr/bin/python3 -m tq.models.fashion models/   # writes fashion_cnn.onnx

Evaluation reads the test images from the Debian package, so only the
model is kept in the repository.
"""
import gzip
import os
import sys

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def _idx(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(split, count=None):
    """x float32 [N, 1, 28, 28] in [0, 1], y int64; split is train or t10k."""
    x = _idx(f"{split}-images-idx3-ubyte.gz")[:count]
    y = _idx(f"{split}-labels-idx1-ubyte.gz")[:count]
    return (x.astype(np.float32) / 255.0)[:, None], y.astype(np.int64)


def train(directory):
    import torch

    from tq.models.training import cnn, export, fit

    torch.manual_seed(0)
    torch.set_num_threads(2)
    x, y = load("train", 30000)
    model = cnn(28)
    fit(model, x, y, epochs=3, batch=128, lr=2e-3)
    export(model, 28, os.path.join(directory, "fashion_cnn.onnx"))


if __name__ == "__main__":
    train(sys.argv[1])
