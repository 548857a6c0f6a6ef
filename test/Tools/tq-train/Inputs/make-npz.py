"""Writes the .npz datasets of the tq-train tests: python make-npz.py DIR.
Samples are 1x8x8 images of a class drawn as a bright row, so that a
model can learn them; labels are int64 (uint8 images in the compressed
archive)."""
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)


def images(n, classes=8):
    y = rng.integers(0, classes, n)
    x = rng.uniform(0, 0.2, (n, 1, 8, 8)).astype(np.float32)
    x[np.arange(n), 0, y, :] += 0.8
    return x, y.astype(np.int64)


xa, ya = images(256)
xb, yb = images(64)
np.savez(os.path.join(out, "rows.npz"), x_train=xa, y_train=ya, x_test=xb, y_test=yb)
np.savez_compressed(os.path.join(out, "rows-u8.npz"),
                    x_train=(xa * 255).astype(np.uint8), y_train=ya.astype(np.int32),
                    x_test=(xb * 255).astype(np.uint8), y_test=yb)
np.savez(os.path.join(out, "no-test-labels.npz"), x_train=xa, y_train=ya, x_test=xb)
np.savez(os.path.join(out, "class-12.npz"), x_train=xa, y_train=np.full(256, 12),
         x_test=xb, y_test=yb)
np.savez(os.path.join(out, "small.npz"), x_train=xa[:10], y_train=ya[:10], x_test=xb,
         y_test=yb)
np.savez(os.path.join(out, "mismatch.npz"), x_train=xa[:10], y_train=ya, x_test=xb,
         y_test=yb)
with open(os.path.join(out, "corrupt.npz"), "wb") as f:
    f.write(rng.integers(0, 256, 300, dtype=np.uint8).tobytes())
