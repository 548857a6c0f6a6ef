"""A small transformer classifier on sklearn's digits: each 8x8 image is a
sequence of 8 row tokens (8 pixels each), embedded to 32 features with a
learned position embedding, one pre-norm encoder block (single-head self
attention, MLP 64 with ReLU, LayerNorm before each, residuals), mean
pooling over the tokens and a linear classifier. Trained with Debian's
python3-torch (fixed seeds, seconds) and exported to ONNX (opset 13, so
LayerNorm appears in its expanded form: ReduceMean, Sub, Pow, Sqrt, Div).

    /usr/bin/python3 -m tq.models.transformer models/

writes models/digits_transformer.onnx; the held-out set is digits_test.npz
(see tq.models.digits, same split).
"""
import os
import sys

import numpy as np

D, HIDDEN, TOKENS = 32, 64, 8


def model():
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(TOKENS, D)
            self.pos = nn.Parameter(torch.zeros(TOKENS, D))
            self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.q, self.k, self.v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
            self.out = nn.Linear(D, D)
            self.mlp = nn.Sequential(nn.Linear(D, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, D))
            self.head = nn.Linear(D, 10)

        def forward(self, image):
            x = self.embed(image[:, 0]) + self.pos          # [B, 8, D]
            h = self.norm1(x)
            q, k, v = self.q(h), self.k(h), self.v(h)
            att = torch.softmax(q @ k.transpose(1, 2) / D ** 0.5, dim=-1)
            x = x + self.out(att @ v)
            x = x + self.mlp(self.norm2(x))
            return self.head(x.mean(dim=1))

    return Block()


def train(directory):
    import torch

    from tq.models.digits import split
    from tq.models.training import fit

    torch.manual_seed(0)
    x_train, y_train, x_test, y_test = split()
    m = model()
    fit(m, x_train, y_train, epochs=60, batch=64, lr=3e-3)
    with torch.no_grad():
        acc = (m(torch.from_numpy(x_test)).argmax(1).numpy() == y_test).mean()
    print(f"torch accuracy on the held-out set: {acc * 100:.2f}%")
    torch.onnx.export(m, torch.zeros(1, 1, 8, 8),
                      os.path.join(directory, "digits_transformer.onnx"),
                      input_names=["image"], output_names=["logits"], opset_version=13,
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})


if __name__ == "__main__":
    train(sys.argv[1])
