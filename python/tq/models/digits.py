"""A small CNN on sklearn's bundled digits (8x8 grey images, 10 classes),
trained with Debian's python3-torch (fixed seeds, a few seconds) and
exported to ONNX.

    /usr/bin/python3 -m tq.models.digits models/

writes models/digits_cnn.onnx and models/digits_test.npz (the 360
held-out images as pixel values 0..16, and their labels), both kept in the
repository so that evaluating needs neither torch nor sklearn. The split
is deterministic: 1437 training and 360 held-out images.
"""
import os
import sys

import numpy as np


def split():
    """(x_train, y_train, x_test, y_test), x as float32 [N, 1, 8, 8] in [0, 1]."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None, :, :]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))
    x, y = x[order], y[order]
    return x[:1437], y[:1437], x[1437:], y[1437:]


def load_test(path):
    """The held-out set saved by train(): x float32 [N, 1, 8, 8], y int64."""
    d = np.load(path)
    return (d["pixels"].astype(np.float32) / 16.0)[:, None, :, :], d["labels"]


def train(directory):
    import torch

    from tq.models.training import cnn, export, fit

    torch.manual_seed(0)
    x_train, y_train, x_test, y_test = split()
    model = cnn(8)
    fit(model, x_train, y_train, epochs=30, batch=64, lr=3e-3)
    np.savez_compressed(os.path.join(directory, "digits_test.npz"),
                        pixels=np.rint(x_test[:, 0] * 16).astype(np.uint8),
                        labels=y_test)
    export(model, 8, os.path.join(directory, "digits_cnn.onnx"))


if __name__ == "__main__":
    train(sys.argv[1])
