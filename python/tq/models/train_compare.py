"""Trains the digits CNN and the Fashion CNN with tq-train (f32, 8-bit,
the 4->8-bit schedule and adaptive widths with tq-train's stochastic
rounding of the gradients, and 8-bit and the schedule with nearest
rounding) and with the torch fp32 reference
from the same seeded initialization, data order and optimizer, and prints
the tables of docs/Training.md: the final test accuracy of each seed and
their mean, and the step time at batch 64 on 1 and 2 threads against
torch's step and onnxruntime's forward, measured side by side in this run
(the median of three rounds of the three).

    /usr/bin/python3 -m tq.models.train_compare BUILD/bin [--quick] [--seeds=N]

(scripts/bench-train.sh runs it.) --quick trains on 6400 samples for the
smoke test. --seeds (default 3) trains every configuration from seeds
1..N: each seed is its own initialization and data order, for tile-quant
and torch alike. One seed's difference to torch is mostly noise (one digits
test image is 0.28 points); the mean over seeds is what the table
compares."""
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
TILE = 32  # tq-train's default
SEEDS = 3
COMMON = ["--batch=64", "--lr=0.05", "--momentum=0.9", "--init=seeded"]


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def tq_train(tag, model, data, epochs, *extra, seed=1):
    log = os.path.join(WORK, f"{tag}-{seed}.json")
    limit = ["--limit-train=6400"] if QUICK else []
    run([os.path.join(BIN, "tq-train"), model, f"--data={data}", f"--epochs={epochs}",
         *COMMON, f"--seed={seed}", *limit, f"--log={log}", *extra])
    return json.load(open(log))


def torch_train(tag, init, data, epochs, threads=1, limit=None, seed=1):
    log = os.path.join(WORK, f"{tag}-{seed}.json")
    lim = [f"--limit-train={limit}"] if limit else (["--limit-train=6400"] if QUICK else [])
    run([sys.executable, "-m", "tq.models.train_reference", init, f"--data={data}",
         f"--epochs={epochs}", "--batch=64", "--lr=0.05", "--momentum=0.9", f"--seed={seed}",
         f"--threads={threads}", *lim, f"--log={log}"])
    return json.load(open(log))


def step_ms(log):
    return float(np.median([e["ms_per_step"] for e in log["epochs"]]))


def ort_forward_ms(model, shape, threads):
    from tq.ort import ORT, install
    x = np.random.default_rng(0).random((64, *shape), dtype=np.float32)
    _, ms = ORT(install()).run(model, {"image": x}, repeat=30, threads=threads)
    return ms


def step_times(name, model, data, init, side, threads, rounds=3, limit=6400):
    """The step time of tq-train (8-bit) and of torch, and onnxruntime's
    forward time, at batch 64 on `threads`: each measured in turn, `rounds`
    times over (one epoch of `limit` samples for the steps), and the median
    of each. Measured side by side, the three see the same phases of the
    machine, whose speed drifts over the minutes of the accuracy runs."""
    times = []
    for _ in range(rounds):
        tq = tq_train(f"{name}-q8-{threads}t", model, data, 1, f"--quantize=tile={TILE}",
                      f"--num-threads={threads}", f"--limit-train={limit}", "--limit-test=64")
        ref = torch_train(f"{name}-torch-{threads}t", init, data, 1, threads=threads,
                          limit=limit)
        ort = ort_forward_ms(model, (1, side, side), threads)
        times.append((step_ms(tq), step_ms(ref), ort))
    return tuple(float(np.median(column)) for column in zip(*times))


def accuracies(name, model, data, epochs, schedule, seed):
    """The final test accuracy of each configuration from `seed`, and the
    logs of the 8-bit run, of torch's and of the adaptive run."""
    init = os.path.join(WORK, f"{os.path.basename(model)}.{seed}.init.onnx")
    tq = lambda tag, *extra: tq_train(f"{name}-{tag}", model, data, epochs, *extra,
                                      seed=seed)
    q = f"--quantize=tile={TILE}"
    near = "grad-rounding=nearest_even"
    logs = {
        "f32": tq("f32", "--float", f"--save-init={init}"),
        # tq-train's default: gradients rounded stochastically.
        "q8": tq("q8", q),
        "sched": tq("sched", f"{q} policy=schedule schedule={schedule}"),
        "adaptive": tq("adaptive", f"{q} policy=adaptive"),
        "q8_near": tq("q8-near", f"{q} {near}"),
        "sched_near": tq("sched-near", f"{q} policy=schedule schedule={schedule} {near}"),
    }
    logs["torch"] = torch_train(f"{name}-torch", init, data, epochs, seed=seed)
    return logs


COLUMNS = ("f32", "q8", "sched", "adaptive", "q8_near", "sched_near")


def main():
    global BIN, QUICK, SEEDS
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    BIN = sys.argv[1]
    QUICK = "--quick" in sys.argv
    for arg in sys.argv[2:]:
        if arg.startswith("--seeds="):
            SEEDS = int(arg.split("=", 1)[1])
            if SEEDS < 1:
                sys.exit("train_compare: --seeds must be at least 1")
    rows = []
    for name, (onnx, data, epochs, schedule) in MODELS.items():
        model = os.path.join(ROOT, "models", onnx)
        runs = [accuracies(name, model, data, epochs, schedule, seed)
                for seed in range(1, SEEDS + 1)]
        init = os.path.join(WORK, f"{onnx}.1.init.onnx")
        side = 8 if data == "digits" else 28
        # The step time does not depend on the data: one epoch of 6400
        # samples (the digits' 1437 in full) per measurement.
        rows.append((name, epochs, runs,
                     *step_times(name, model, data, init, side, 1),
                     *step_times(name, model, data, init, side, 2)))

    seeds = ", ".join(str(s) for s in range(1, SEEDS + 1))
    print(f"Test accuracy, the mean over seeds {seeds}; in brackets, points against "
          "torch fp32's mean, and the lowest and highest difference of one seed:")
    print()
    print("| model | epochs | torch fp32 | tq f32 | tq 8-bit | tq 4→8-bit schedule | "
          "tq adaptive | tq 8-bit, nearest gradients | "
          "tq 4→8-bit schedule, nearest gradients |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, epochs, runs, *_ in rows:
        acc = lambda key: np.array([r[key]["test_accuracy"] for r in runs])
        base = acc("torch")

        def cell(key):
            a = acc(key)
            text = f"{a.mean():.2f}% ({a.mean() - base.mean():+.2f}"
            if len(runs) > 1:
                d = a - base
                text += f"; {d.min():+.2f} to {d.max():+.2f}"
            text += ")"
            if key == "adaptive":
                bits = np.mean([r[key]["epochs"][-1].get("average_bits", 0) for r in runs])
                text += f", {bits:.2f} bits"
            return text
        print(f"| {name} | {epochs} | {base.mean():.2f}% | "
              + " | ".join(cell(k) for k in COLUMNS) + " |")
    print()
    print("| model | threads | tq 8-bit step | torch fp32 step | onnxruntime fp32 forward | "
          "tq / torch | tq / onnxruntime forward |")
    print("|---|---|---|---|---|---|---|")
    for name, _, _, t1, r1, o1, t2, r2, o2 in rows:
        for threads, t, r, o in ((1, t1, r1, o1), (2, t2, r2, o2)):
            print(f"| {name} | {threads} | {t:.2f} ms | {r:.2f} ms | {o:.2f} ms | "
                  f"{t / r:.2f} | {t / o:.2f} |")


if __name__ == "__main__":
    main()
