# REQUIRES: digits
# RUN: rm -rf %t && %python %S/Inputs/make-npz.py %t
# RUN: %python %s %tq_build/bin %tq_src/models %t | FileCheck %s
# tq-train on the digits CNN (seeded initialization, seeded data order):
#  - f32 and 8-bit (8x8 tiles) training learn the digits (>= 90% test
#    accuracy after 8 epochs), the 8-bit run within 3 points of the f32 one;
#  - the same seed gives the same log twice (deterministic);
#  - the exported ONNX model, imported again and run by tq-run (and by
#    onnxruntime when it is installed), scores the accuracy tq-train logged;
#  - the adaptive policy logs the widths it chose at run time;
#  - --init=model starts from the bundled trained weights;
#  - .npz datasets, stored (f32) and compressed (uint8), train alike.
import json
import os
import subprocess
import sys

import numpy as np

from tq.cpu import Runner

BIN, MODELS, WORK = sys.argv[1:4]
cnn = os.path.join(MODELS, "digits_cnn.onnx")


def train(tag, *args):
    log = os.path.join(WORK, f"{tag}.json")
    out = os.path.join(WORK, f"{tag}.onnx")
    subprocess.run([os.path.join(BIN, "tq-train"), *args, f"--log={log}", "-o", out],
                   check=True, stdout=subprocess.DEVNULL)
    with open(log) as f:
        return json.load(f), out


f32, f32_model = train("f32", cnn, "--data=digits", "--epochs=8", "--init=seeded", "--float")
q8, _ = train("q8", cnn, "--data=digits", "--epochs=8", "--init=seeded", "--quantize=tile=8")
again, _ = train("q8-again", cnn, "--data=digits", "--epochs=8", "--init=seeded",
                 "--quantize=tile=8")
a, b = f32["test_accuracy"], q8["test_accuracy"]
print(f"f32 {a:.2f}%, 8-bit {b:.2f}%: "
      f"{'both learn' if min(a, b) >= 90 and abs(a - b) <= 3 else 'NOT LEARNING'}")
# CHECK: f32 {{.*}}, 8-bit {{.*}}: both learn
losses = [e["loss"] for e in q8["epochs"]]
print("loss " + ("falls" if losses[-1] < 0.5 * losses[0] else "DOES NOT FALL"))
# CHECK: loss falls
same = [e["loss"] for e in again["epochs"]] == losses
print("same seed, same run" if same else "NOT DETERMINISTIC")
# CHECK: same seed, same run

# The test split tq-train uses: every fifth row of scikit-learn's CSV.
import gzip
rows = np.loadtxt(gzip.open(
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"), delimiter=",")
test = rows[::5]
x = (test[:, :64] / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
y = test[:, 64].astype(np.int64)
mlir = os.path.join(WORK, "exported.mlir")
subprocess.run([os.path.join(BIN, "tq-import-onnx"), f32_model, f"--dim=batch={len(x)}",
                "-o", mlir], check=True)
logits, = Runner(os.path.join(BIN, "tq-run")).run(open(mlir).read(), [x])
got = 100.0 * np.mean(logits.argmax(1) == y)
print(f"exported model: {got:.2f}% "
      f"{'as logged' if abs(got - a) < 0.3 else f'BUT tq-train logged {a:.2f}%'}")
# CHECK: exported model: {{.*}}% as logged
ort = os.path.join(MODELS, "..", "build", "ort", "node_modules")
if os.path.isdir(os.path.join(ort, "onnxruntime-node")):
    from tq.ort import ORT
    out, _ = ORT(ort).run(f32_model, {"image": x})
    ours = 100.0 * np.mean(list(out.values())[0].argmax(1) == y)
    print(f"onnxruntime: {'as logged' if abs(ours - a) < 0.3 else f'{ours:.2f}%'}")
else:
    print("onnxruntime: not installed (scripts/fetch-models.sh), not run")
# CHECK: onnxruntime: {{as logged|not installed .*, not run}}

adaptive, _ = train("adaptive", cnn, "--data=digits", "--epochs=2", "--init=seeded",
                    "--quantize=tile=8 policy=adaptive max-bits=8")
last = adaptive["epochs"][-1]
ok = 2 <= last["average_bits"] <= 8 and len(last["widths"]) > 0 and \
    all(2 <= w <= 8 for w in last["widths"].values())
print(f"adaptive: {len(last['widths'])} run-time widths, "
      f"{'average in [2, 8]' if ok else 'OUT OF RANGE'}")
# CHECK: adaptive: {{[1-9][0-9]*}} run-time widths, average in [2, 8]

start, _ = train("from-model", cnn, "--data=digits", "--epochs=1", "--lr=0.001",
                 "--quantize=tile=8")
print(f"from the bundled weights: "
      f"{'trained already' if start['test_accuracy'] >= 95 else 'NOT THE MODEL'}")
# CHECK: from the bundled weights: trained already

stored, _ = train("npz", cnn, f"--data={WORK}/rows.npz", "--epochs=20", "--lr=0.1",
                  "--init=seeded", "--float")
packed, _ = train("npz-u8", cnn, f"--data={WORK}/rows-u8.npz", "--epochs=20", "--lr=0.1",
                  "--init=seeded", "--float")
sa, sb = stored["test_accuracy"], packed["test_accuracy"]
print(f"npz: {'both learn' if min(sa, sb) >= 80 else f'{sa:.1f}% and {sb:.1f}%'}")
# CHECK: npz: both learn

# The update interval (SPEC A6). Recomputing every iteration (an endless
# warm-up) is the plain step, bit for bit; with intervals the step keeps
# parameters for several iterations, and still learns.
every, _ = train("interval-every", cnn, "--data=digits", "--epochs=8", "--init=seeded",
                 "--quantize=tile=8", "--update-interval", "--interval-warmup=1000000")
print("interval 1: " + ("the plain step" if [e["loss"] for e in every["epochs"]] == losses
                        else "DIFFERS FROM THE PLAIN STEP"))
# CHECK: interval 1: the plain step
kept, _ = train("interval", cnn, "--data=digits", "--epochs=8", "--init=seeded",
                "--quantize=tile=8", "--update-interval", "--interval-warmup=20")
last = kept["epochs"][-1]
due = last["recomputations"] + last["recomputations_saved"]
ratio = due / last["recomputations"]
print(f"interval: {len(last['intervals'])} operands, "
      f"{'fewer recomputations' if ratio > 1.2 else f'ONLY {ratio:.2f}x FEWER'}, "
      f"{'learns' if kept['test_accuracy'] >= 90 else 'NOT LEARNING'}")
# CHECK: interval: {{[1-9][0-9]*}} operands, fewer recomputations, learns

# Stochastic rounding of gradients: seeded, so two runs are the same; not
# the nearest-rounding run.
sr = [train(f"sr-{k}", cnn, "--data=digits", "--epochs=2", "--init=seeded",
            "--quantize=tile=8 grad-rounding=stochastic seed=3")[0] for k in range(2)]
near, _ = train("sr-nearest", cnn, "--data=digits", "--epochs=2", "--init=seeded",
                "--quantize=tile=8 grad-rounding=nearest_even")
sr_losses = [[e["loss"] for e in log["epochs"]] for log in sr]
print("stochastic rounding: " +
      ("deterministic" if sr_losses[0] == sr_losses[1] else "NOT DETERMINISTIC") + ", " +
      ("its own rounding" if sr_losses[0] != [e["loss"] for e in near["epochs"]]
       else "THE SAME AS NEAREST"))
# CHECK: stochastic rounding: deterministic, its own rounding

# tq-train's default rounds the gradients stochastically, seeded with --seed
# (0 here): the plain 8-bit run above is that run, bit for bit, and its log
# names the options the step was quantized with.
explicit, _ = train("sr-default", cnn, "--data=digits", "--epochs=8", "--init=seeded",
                    "--quantize=tile=8 grad-rounding=stochastic seed=0")
same = [e["loss"] for e in explicit["epochs"]] == losses
print("default gradients: " + ("stochastic, seeded with --seed" if same
                               else "NOT THE STOCHASTIC ROUNDING OF --seed") +
      f"; logged as '{q8['quantize']}'")
# CHECK: default gradients: stochastic, seeded with --seed; logged as 'tile=8 grad-rounding=stochastic seed=0'

# With 1xV tiles dY's two quantizations differ in type: each keeps its own
# stochastic rounding (no stochastic requantization, which the CPU backend
# does not lower), and the step compiles and learns.
vec, _ = train("sr-vector", cnn, "--data=digits", "--epochs=2", "--init=seeded",
               "--quantize=tile=8 granularity=vector")
vl = [e["loss"] for e in vec["epochs"]]
print("1xV tiles, stochastic gradients: " +
      ("learns" if all(np.isfinite(vl)) and vl[-1] < vl[0] else f"LOSSES {vl}"))
# CHECK: 1xV tiles, stochastic gradients: learns
