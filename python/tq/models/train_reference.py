"""The fp32 reference of tq-train: the same model, initialization, data,
data order and optimizer, in Debian's torch.

    /usr/bin/python3 -m tq.models.train_reference INIT.onnx --data=digits \\
        --epochs=8 [--batch=64 --lr=0.05 --momentum=0.9 --weight-decay=0 \\
        --seed=0 --threads=1 --limit-train=N --limit-test=N --log=FILE.json]

INIT.onnx is the model tq-train starts from (`tq-train --save-init`); its
initializers are loaded by name into the CNN of tq.models.training. The
data order replays tq-train's: a splitmix64 generator seeded with --seed
and a Fisher-Yates shuffle per epoch, then full batches in that order.
"""
import argparse
import gzip
import json
import time

import numpy as np

MASK = (1 << 64) - 1


class SplitMix64:
    """tq::data::SplitMix64."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def shuffle(n, rng):
    """tq::data::shuffle: Fisher-Yates from the top."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.next() % (i + 1)
        order[i], order[j] = order[j], order[i]
    return np.array(order)


DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def load(spec):
    """(x_train, y_train, x_test, y_test) as tq-train reads `spec`."""
    if spec == "digits":
        rows = np.loadtxt(gzip.open(DIGITS), delimiter=",", dtype=np.float32)
        x = (rows[:, :64] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
        y = rows[:, 64].astype(np.int64)
        test = np.arange(len(x)) % 5 == 0
        return x[~test], y[~test], x[test], y[test]
    if spec == "fashion-mnist":
        from tq.models.fashion import load as fashion
        return (*fashion("train"), *fashion("t10k"))
    d = np.load(spec)
    scale = (lambda a: a.astype(np.float32) / 255.0 if a.dtype == np.uint8
             else a.astype(np.float32))
    return (scale(d["x_train"]), d["y_train"].astype(np.int64), scale(d["x_test"]),
            d["y_test"].astype(np.int64))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("init")
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--limit-train", type=int, default=0)
    p.add_argument("--limit-test", type=int, default=0)
    p.add_argument("--log")
    a = p.parse_args()

    import onnx
    import torch
    from onnx import numpy_helper

    from tq.models.training import cnn

    torch.set_num_threads(a.threads)
    xtr, ytr, xte, yte = load(a.data)
    if a.limit_train:
        xtr, ytr = xtr[:a.limit_train], ytr[:a.limit_train]
    if a.limit_test:
        xte, yte = xte[:a.limit_test], yte[:a.limit_test]
    net = cnn(xtr.shape[-1])
    init = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy())
            for i in onnx.load(a.init).graph.initializer}
    net.load_state_dict({k: init[k] for k in net.state_dict()})
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=a.momentum,
                          weight_decay=a.weight_decay)
    rng = SplitMix64(a.seed)
    steps = len(xtr) // a.batch
    xt, yt = torch.from_numpy(xtr), torch.from_numpy(ytr)
    log = []
    for epoch in range(1, a.epochs + 1):
        order = torch.from_numpy(shuffle(len(xtr), rng))
        net.train()
        start = time.perf_counter()
        total = 0.0
        step_ms = []
        for s in range(steps):
            t = time.perf_counter()
            idx = order[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item()
            step_ms.append(1e3 * (time.perf_counter() - t))
        seconds = time.perf_counter() - start
        # The median step: the first ones pay one-time costs (thread
        # start-up, first touches of memory), as tq-train's do.
        ms = float(np.median(step_ms))
        net.eval()
        with torch.no_grad():
            acc = 100.0 * float((net(torch.from_numpy(xte)).argmax(1).numpy() == yte).mean())
        log.append({"epoch": epoch, "loss": total / steps, "test_accuracy": acc,
                    "seconds": seconds, "ms_per_step": ms})
        print(f"epoch {epoch}/{a.epochs}: loss {total / steps:.4f}, test accuracy "
              f"{acc:.2f}%, {seconds:.2f} s ({ms:.2f} ms/step)")
    if a.log:
        with open(a.log, "w") as f:
            json.dump({"epochs": log, "test_accuracy": log[-1]["test_accuracy"]}, f,
                      indent=2)


if __name__ == "__main__":
    main()
