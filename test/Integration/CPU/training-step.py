# REQUIRES: torch
# RUN: %python %s %tq_build/bin %tq_src/models | FileCheck %s
# tq-training-step (SPEC T7) on ONNX models, run by tq-run:
#  1. the f32 step against torch autograd and torch.optim.SGD (momentum 0.9,
#     weight decay) on the same weights and batch: the loss, the logits, the
#     new parameters and momenta agree to 2e-6 + 1e-5·|x| + 1e-6·max|x|;
#  2. the gradient against central finite differences of the loss along
#     random directions (relative error below 2e-2 in f32);
#  3. the 8-bit step (tq-quantize, V×V tiles): the same bits on the CPU and
#     on the PPU simulator, updates within cosine 0.98 of the f32 ones, and 0
#     requantizations for V×V tiles against some for 1×V vectors (SPEC T4),
#     counted by tq-fold-transposes and by the PPU streams.
# The models: the bundled digits CNN (conv, ReLU, max pool, Gemm), one
# exported here with a strided dilated convolution, an overlapping max
# pool, an average pool, sigmoid and tanh, one whose max pool leaves a
# row and a column out of every window, and one with rectangular kernels
# and paddings.
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from tq.cpu import Runner
from tq.models.training import cnn

BIN, MODELS = sys.argv[1], sys.argv[2]
cpu = Runner(os.path.join(BIN, "tq-run"))
work = tempfile.mkdtemp(prefix="tq-train-")
rng = np.random.default_rng(3)
torch.manual_seed(3)
B, MOMENTUM, DECAY = 8, 0.9, 1e-3
EPOCH = np.array(0, np.int32)  # the epoch argument (tq.epoch), a scalar
ITERATION = np.array(0, np.int32)  # the iteration (tq.iteration), a scalar


def tool(name, *args):
    proc = subprocess.run([os.path.join(BIN, name), *args], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{name} failed: {proc.stderr}")
    return proc.stderr


def step_module(onnx_path, tag, momentum=MOMENTUM, decay=DECAY):
    """Imports `onnx_path` with batch B and adds the training step; returns
    the module's text and the parameters' names in argument order."""
    mlir = os.path.join(work, f"{tag}.mlir")
    tool("tq-import-onnx", onnx_path, f"--dim=batch={B}", "-o", mlir)
    step = os.path.join(work, f"{tag}-step.mlir")
    tool("tq-opt", mlir, f"-tq-training-step=momentum={momentum} weight-decay={decay}",
         "-o", step)
    text = open(step).read()
    sig = re.search(r"func.func @train_step\((.*?)\) ->", text).group(1)
    names = re.findall(r'tq.name = "([^"]+)", tq.parameter', sig)
    return step, text, names


def initializers(path):
    return {i.name: numpy_helper.to_array(i).copy()
            for i in onnx.load(path).graph.initializer}


def close(got, want):
    # An element that is a small sum of large terms (a gradient near
    # cancellation) also gets 1e-6 of the tensor's largest value: about
    # 8 ulps of it, the rounding that summing in another order (8 or 16
    # lanes, torch's kernels) can move it by.
    scale = float(np.abs(want).max()) if np.size(want) else 0.0
    return np.all(np.abs(got - want) <= 2e-6 + 1e-5 * np.abs(want) + 1e-6 * scale)


class Extra(torch.nn.Module):
    """Ops beyond the digits CNN's: stride 2 and dilation 2, an overlapping
    3x3 max pool of stride 2, an average pool, sigmoid, tanh."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(2, 8, 3, stride=2, padding=1, dilation=2)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = torch.sigmoid(self.c1(x))
        x = torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1)
        x = torch.tanh(self.c2(x))
        x = torch.nn.functional.avg_pool2d(x, 2)
        return self.fc(x.flatten(1))


def torch_step(net, names, params, moms, x, y, lr):
    """One SGD step in torch from `params` and momenta `moms` (by name)."""
    net.load_state_dict({n: torch.from_numpy(p) for n, p in zip(names, params)})
    opt = torch.optim.SGD(net.parameters(), lr=float(lr), momentum=MOMENTUM,
                          weight_decay=DECAY)
    byname = dict(net.named_parameters())
    for n, m in zip(names, moms):
        opt.state[byname[n]]["momentum_buffer"] = torch.from_numpy(m.copy())
    logits = net(torch.from_numpy(x))
    loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(y))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return (loss.item(), logits.detach().numpy(),
            [byname[n].detach().numpy() for n in names],
            [opt.state[byname[n]]["momentum_buffer"].numpy() for n in names])


def check_against_torch(tag, onnx_path, net, shape, classes):
    step, text, names = step_module(onnx_path, tag)
    init = initializers(onnx_path)
    params = [init[n] for n in names]
    moms = [0.01 * rng.standard_normal(p.shape).astype(np.float32) for p in params]
    x = rng.standard_normal((B, *shape)).astype(np.float32)
    y = rng.integers(0, classes, B).astype(np.int64)
    lr = np.array(0.05, np.float32)
    P = len(params)
    out = cpu.run(text, params + moms + [x, y, lr, EPOCH, ITERATION], entry="train_step", outputs=2 * P + 2)
    loss, logits, want_p, want_m = torch_step(net, names, params, moms, x, y, lr)
    ok = close(out[2 * P], np.float32(loss)) and close(out[2 * P + 1], logits)
    ok = ok and all(close(g, w) for g, w in zip(out[:P], want_p))
    ok = ok and all(close(g, w) for g, w in zip(out[P:2 * P], want_m))
    moved = max(float(np.abs(w - p).max()) for w, p in zip(want_p, params))
    print(f"{tag}: {P} parameters, loss {out[2 * P]:.4f} (torch {loss:.4f}), "
          f"largest update {moved:.3g}: {'same as torch' if ok else 'DIFFERENT'}")
    return step, text, names, params, moms, x, y, lr


# CHECK: digits: 8 parameters, {{.*}}: same as torch
digits_onnx = os.path.join(MODELS, "digits_cnn.onnx")
digits = check_against_torch("digits", digits_onnx, cnn(8), (1, 8, 8), 10)

extra = Extra()
extra_onnx = os.path.join(work, "extra.onnx")
torch.onnx.export(extra, torch.zeros(1, 2, 16, 16), extra_onnx, input_names=["x"],
                  output_names=["logits"], opset_version=13,
                  dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
# CHECK: extra: 6 parameters, {{.*}}: same as torch
check_against_torch("extra", extra_onnx, Extra(), (2, 16, 16), 5)


class Ragged(torch.nn.Module):
    """A 2x2 max pool of stride 2 on 7x7: the last row and column are in no
    window (their gradient is 0)."""

    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 3 * 3, 3)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.c(x)), 2)
        return self.fc(x.flatten(1))


ragged_onnx = os.path.join(work, "ragged.onnx")
torch.onnx.export(Ragged(), torch.zeros(1, 1, 7, 7), ragged_onnx, input_names=["x"],
                  output_names=["logits"], opset_version=13,
                  dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
# CHECK: ragged: 4 parameters, {{.*}}: same as torch
check_against_torch("ragged", ragged_onnx, Ragged(), (1, 7, 7), 3)



class Uneven(torch.nn.Module):
    """Rectangular kernels and padding on activations with a gradient: a
    3x2 kernel padded 2 on H and 0 on W, then a 2x2 kernel padded 2, more
    than its size - 1."""

    def __init__(self):
        super().__init__()
        self.c0 = torch.nn.Conv2d(1, 2, 1)
        self.c1 = torch.nn.Conv2d(2, 3, (3, 2), padding=(2, 0))
        self.c2 = torch.nn.Conv2d(3, 2, 2, padding=2)
        self.fc = torch.nn.Linear(2 * 10 * 8, 3)

    def forward(self, x):
        x = torch.tanh(self.c1(torch.tanh(self.c0(x))))
        return self.fc(torch.tanh(self.c2(x)).flatten(1))


uneven_onnx = os.path.join(work, "uneven.onnx")
torch.onnx.export(Uneven(), torch.zeros(1, 1, 5, 6), uneven_onnx, input_names=["x"],
                  output_names=["logits"], opset_version=13,
                  dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
# CHECK: uneven: 8 parameters, {{.*}}: same as torch
check_against_torch("uneven", uneven_onnx, Uneven(), (1, 5, 6), 3)

# Finite differences on the extra model: with momentum and decay 0 and
# lr = 1, p - p' is the gradient g; L(p ± εd) is the loss at lr = 0.
_, text, names = step_module(extra_onnx, "extra-fd", momentum=0, decay=0)
init = initializers(extra_onnx)
params = [init[n] for n in names]
x = rng.standard_normal((B, 2, 16, 16)).astype(np.float32)
y = rng.integers(0, 5, B).astype(np.int64)
P = len(params)


def run(ps, lr):
    return cpu.run(text, ps + [x, y, np.array(lr, np.float32), EPOCH, ITERATION], entry="train_step",
                   outputs=P + 2)


grad = [p - q for p, q in zip(params, run(params, 1.0)[:P])]
worst = 0.0
for trial in range(3):
    d = [rng.standard_normal(p.shape).astype(np.float32) for p in params]
    norm = np.sqrt(sum(float((v * v).sum()) for v in d))
    d = [v / norm for v in d]
    eps = 1e-2
    lp = run([p + eps * v for p, v in zip(params, d)], 0.0)[P]
    lm = run([p - eps * v for p, v in zip(params, d)], 0.0)[P]
    fd = (float(lp) - float(lm)) / (2 * eps)
    an = sum(float((g * v).sum()) for g, v in zip(grad, d))
    worst = max(worst, abs(fd - an) / max(abs(an), 1e-3))
# CHECK: finite differences: {{.*}} within 2e-2
print(f"finite differences: largest relative error {worst:.2e} "
      f"{'within 2e-2' if worst < 2e-2 else 'TOO LARGE'}")

# The 8-bit step of the digits CNN on 8x8 tiles.
step, text, names, params, moms, x, y, lr = digits
P = len(params)
q = os.path.join(work, "digits-q.mlir")
tool("tq-opt", step, "-tq-quantize=tile=8", "-o", q)
qtext = open(q).read()
inputs = params + moms + [x, y, lr, EPOCH, ITERATION]
got = cpu.run(qtext, inputs, entry="train_step", outputs=2 * P + 2)
f32 = cpu.run(text, inputs, entry="train_step", outputs=2 * P + 2)
cosines = [float(np.dot((g - p).ravel(), (f - p).ravel()) /
                 (np.linalg.norm(g - p) * np.linalg.norm(f - p)))
           for g, f, p in zip(got[:P], f32[:P], params)]
# CHECK: 8-bit step: {{.*}} updates within 0.98 of the f32 direction
print(f"8-bit step: smallest cosine to the f32 update {min(cosines):.4f}: updates "
      f"{'within 0.98 of the f32 direction' if min(cosines) > 0.98 else 'OFF'}")
ppu, stats = cpu.run_ppu(qtext, inputs, entry="train_step", outputs=2 * P + 2)
same = all(np.array_equal(a, b) for a, b in zip(got, ppu))
# CHECK: PPU: {{[1-9][0-9]*}} launches, same bits as the CPU
print(f"PPU: {stats['launches']} launches, "
      f"{'same bits as the CPU' if same else 'DIFFERENT from the CPU'}")
# The backward products on the PPU read the stored V×V tiles transposed: the
# compiled streams requantize nothing. With 1×V vectors they requantize the
# transposed operands (REQ), and the step still gives the CPU's bits.
vq = os.path.join(work, "digits-vq.mlir")
tool("tq-opt", step, "-tq-quantize=tile=8 granularity=vector", "-o", vq)
vtext = open(vq).read()
vcpu = cpu.run(vtext, inputs, entry="train_step", outputs=2 * P + 2)
vppu, vstats = cpu.run_ppu(vtext, inputs, entry="train_step", outputs=2 * P + 2)
vsame = all(np.array_equal(a, b) for a, b in zip(vcpu, vppu))
# CHECK: PPU streams: 0 requantizations with tiles, {{[1-9][0-9]*}} with vectors (same bits as the CPU), unified-buffer reads +{{[1-9][0-9]*}}
print(f"PPU streams: {stats['requantizations']} requantizations with tiles, "
      f"{vstats['requantizations']} with vectors "
      f"({'same bits as the CPU' if vsame else 'DIFFERENT from the CPU'}), "
      f"unified-buffer reads {vstats['ub_reads'] - stats['ub_reads']:+d}")

# Stochastic gradients draw their noise from each quantization's seed plus
# the iteration argument: the same iteration gives the same bits, the next
# one other noise (other updates).
sq = os.path.join(work, "digits-sr.mlir")
tool("tq-opt", step, "-tq-quantize=tile=8 grad-rounding=stochastic seed=4", "-o", sq)
srtext = open(sq).read()
assert "seed_offset(" in srtext, "no stochastic quantization takes the iteration"
def sr_step(iteration):
    return cpu.run(srtext, params + moms + [x, y, lr, EPOCH, np.array(iteration, np.int32)],
                   entry="train_step", outputs=2 * P + 2)
a0, b0, a1 = sr_step(0), sr_step(0), sr_step(1)
repeat = all(np.array_equal(u, v) for u, v in zip(a0, b0))
differ = sum(not np.array_equal(u, v) for u, v in zip(a0[:P], a1[:P]))
# CHECK: stochastic gradients: the same iteration repeats bit for bit, the next changes {{[1-9][0-9]*}} of
print(f"stochastic gradients: the same iteration "
      f"{'repeats bit for bit' if repeat else 'DIFFERS'}, the next changes {differ} of "
      f"{P} parameters")

# On 2 threads each one runs the forward pass and the output gradients on
# 32 of the 64 images (tq-cpu-split-batch), with the stochastic noise of
# those images' places; the weight gradients sum over all 64 after. The
# step gives the bits of 1 thread.
shared = os.path.join(work, "digits-sr-split.mlir")
tool("tq-opt", sq, "--pass-pipeline=builtin.module(func.func("
     "tq-cpu-split-batch{chunks=2}))", "-o", shared)
step_text = open(shared).read().split("func.func @train_step")[1].split("func.func")[0]
split = "scf.forall" in step_text
a2 = cpu.run(srtext, params + moms + [x, y, lr, EPOCH, np.array(0, np.int32)],
             entry="train_step", outputs=2 * P + 2, threads=2)
same2 = all(np.array_equal(u, v) for u, v in zip(a0, a2))
# CHECK: 2 threads: batch split True, the same bits as 1 thread: True
print(f"2 threads: batch split {split}, the same bits as 1 thread: {same2}")

for granularity in ("tile", "vector"):
    remark = tool("tq-opt", step, "-tq-split-grouped-convs", "-tq-choose-split-dims",
                  f"-tq-insert-quantization=tile=8 granularity={granularity}",
                  "-tq-fold-transposes=report", "-o", os.devnull)
    folded, requant = re.search(r"(\d+) transposes folded .*, (\d+) requantizations",
                                remark).groups()
    print(f"{granularity}: {folded} transposes read in place, {requant} requantizations")
# CHECK: tile: {{[1-9][0-9]*}} transposes read in place, 0 requantizations
# CHECK: vector: {{[1-9][0-9]*}} transposes read in place, {{[1-9][0-9]*}} requantizations
