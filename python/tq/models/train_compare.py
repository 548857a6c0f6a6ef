"""Trains the digits CNN and the Fashion CNN with tq-train (f32, 8-bit,
the 4->8-bit schedule with nearest and with stochastic rounding of the
gradients, adaptive widths) and with the torch fp32 reference
from the same seeded initialization, data order and optimizer, and prints
the table of docs/Training.md: final test accuracy, and the step time at
batch 64 on 1 and 2 threads against torch's step and onnxruntime's
forward, all measured in this run.

    /usr/bin/python3 -m tq.models.train_compare BUILD/bin [--quick]

(scripts/bench-train.sh runs it.) --quick trains on 6400 samples for the
smoke test."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

BIN = "build/bin"
QUICK = False
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
WORK = tempfile.mkdtemp(prefix="tq-train-compare-")
MODELS = {
    # name: (onnx, dataset, epochs, schedule)
    "digits CNN": ("digits_cnn.onnx", "digits", 10, "0-6:4,7-9:8"),
    "Fashion CNN": ("fashion_cnn.onnx", "fashion-mnist", 3, "0-1:4,2-2:8"),
}
TILE = 16
COMMON = ["--batch=64", "--lr=0.05", "--momentum=0.9", "--init=seeded", "--seed=1"]


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def tq_train(tag, model, data, epochs, *extra):
    log = os.path.join(WORK, f"{tag}.json")
    limit = ["--limit-train=6400"] if QUICK else []
    run([os.path.join(BIN, "tq-train"), model, f"--data={data}", f"--epochs={epochs}",
         *COMMON, *limit, f"--log={log}", *extra])
    return json.load(open(log))


def torch_train(tag, init, data, epochs, threads=1, limit=None):
    log = os.path.join(WORK, f"{tag}.json")
    lim = [f"--limit-train={limit}"] if limit else (["--limit-train=6400"] if QUICK else [])
    run([sys.executable, "-m", "tq.models.train_reference", init, f"--data={data}",
         f"--epochs={epochs}", "--batch=64", "--lr=0.05", "--momentum=0.9", "--seed=1",
         f"--threads={threads}", *lim, f"--log={log}"])
    return json.load(open(log))


def step_ms(log):
    return float(np.median([e["ms_per_step"] for e in log["epochs"]]))


def ort_forward_ms(model, shape, threads):
    from tq.ort import ORT, install
    x = np.random.default_rng(0).random((64, *shape), dtype=np.float32)
    _, ms = ORT(install()).run(model, {"image": x}, repeat=30, threads=threads)
    return ms


def main():
    global BIN, QUICK
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    BIN = sys.argv[1]
    QUICK = "--quick" in sys.argv
    rows = []
    for name, (onnx, data, epochs, schedule) in MODELS.items():
        model = os.path.join(ROOT, "models", onnx)
        init = os.path.join(WORK, f"{onnx}.init.onnx")
        f32 = tq_train(f"{name}-f32", model, data, epochs, "--float", f"--save-init={init}")
        q8 = tq_train(f"{name}-q8", model, data, epochs, f"--quantize=tile={TILE}")
        sched = tq_train(f"{name}-sched", model, data, epochs,
                         f"--quantize=tile={TILE} policy=schedule schedule={schedule}")
        sched_sr = tq_train(f"{name}-sched-sr", model, data, epochs,
                            f"--quantize=tile={TILE} policy=schedule schedule={schedule} "
                            "grad-rounding=stochastic seed=1")
        adaptive = tq_train(f"{name}-adaptive", model, data, epochs,
                            f"--quantize=tile={TILE} policy=adaptive")
        ref = torch_train(f"{name}-torch", init, data, epochs)
        # 2 threads, on 3200 samples (the step time does not depend on the data).
        q8_2 = tq_train(f"{name}-q8-2t", model, data, 1, f"--quantize=tile={TILE}",
                        "--num-threads=2", "--limit-train=3200", "--limit-test=64")
        ref_2 = torch_train(f"{name}-torch-2t", init, data, 1, threads=2, limit=3200)
        side = 8 if data == "digits" else 28
        ort1 = ort_forward_ms(model, (1, side, side), 1)
        ort2 = ort_forward_ms(model, (1, side, side), 2)
        rows.append((name, epochs, ref, f32, q8, sched, sched_sr, adaptive,
                     step_ms(q8), step_ms(ref), ort1, step_ms(q8_2), step_ms(ref_2), ort2))

    print("| model | epochs | torch fp32 | tq f32 | tq 8-bit | tq 4→8-bit schedule | "
          "tq 4→8-bit schedule, stochastic gradients | tq adaptive |")
    print("|---|---|---|---|---|---|---|---|")
    for name, epochs, ref, f32, q8, sched, sched_sr, adaptive, *_ in rows:
        base = ref["test_accuracy"]
        cell = lambda log: f"{log['test_accuracy']:.2f}% ({log['test_accuracy'] - base:+.2f})"
        bits = adaptive["epochs"][-1].get("average_bits", 0)
        print(f"| {name} | {epochs} | {base:.2f}% | {cell(f32)} | {cell(q8)} | "
              f"{cell(sched)} | {cell(sched_sr)} | {cell(adaptive)}, {bits:.2f} bits |")
    print()
    print("| model | threads | tq 8-bit step | torch fp32 step | onnxruntime fp32 forward | "
          "tq / torch | tq / onnxruntime forward |")
    print("|---|---|---|---|---|---|---|")
    for name, _, _, _, _, _, _, _, t1, r1, o1, t2, r2, o2 in rows:
        for threads, t, r, o in ((1, t1, r1, o1), (2, t2, r2, o2)):
            print(f"| {name} | {threads} | {t:.2f} ms | {r:.2f} ms | {o:.2f} ms | "
                  f"{t / r:.2f} | {t / o:.2f} |")


if __name__ == "__main__":
    main()
