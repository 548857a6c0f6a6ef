"""The update-interval table of docs/Training.md (SPEC A6): the digits CNN
and the Fashion CNN trained 8-bit by tq-train with parameters recomputed
every iteration, and with --update-interval (the weights' parameters, then
every operand's), from the same seeded initialization and data order:
final test accuracy, parameter recomputations done against those due, and
the median step time, all measured in this run.

    /usr/bin/python3 -m tq.models.interval_compare BUILD/bin [--quick]

(scripts/bench-interval.sh runs it.) --quick trains on 6400 samples."""
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
WORK = tempfile.mkdtemp(prefix="tq-interval-")
MODELS = {
    # name: (onnx, dataset, epochs, the epoch from which training is stable)
    "digits CNN": ("digits_cnn.onnx", "digits", 10, 6),
    "Fashion CNN": ("fashion_cnn.onnx", "fashion-mnist", 3, 3),
}
COMMON = ["--batch=64", "--lr=0.05", "--momentum=0.9", "--init=seeded", "--seed=1",
          "--quantize=tile=32"]
CONFIGS = [
    ("every iteration", []),
    ("interval, weights", ["--update-interval"]),
    ("interval, weights, then once per epoch", ["--update-interval", "STABLE"]),
    ("interval, all operands", ["--update-interval", "--interval-operands=all"]),
]


def train(bin_dir, tag, model, data, epochs, extra, quick):
    log = os.path.join(WORK, f"{tag}.json")
    limit = ["--limit-train=6400"] if quick else []
    subprocess.run([os.path.join(bin_dir, "tq-train"), model, f"--data={data}",
                    f"--epochs={epochs}", *COMMON, *limit, f"--log={log}", *extra],
                   check=True, stdout=subprocess.DEVNULL)
    return json.load(open(log))


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bin_dir, quick = sys.argv[1], "--quick" in sys.argv
    print(f"{cpu_name()}, {os.cpu_count()} cores; 8-bit, tile=32, 1 thread:")
    print()
    print("| model | epochs | parameters | test accuracy | recomputations | "
          "fewer | ms per step |")
    print("|---|---|---|---|---|---|---|")
    for name, (onnx, data, epochs, stable) in MODELS.items():
        model = os.path.join(ROOT, "models", onnx)
        base = None
        for k, (label, extra) in enumerate(CONFIGS):
            extra = [f"--interval-stable-epoch={stable}" if e == "STABLE" else e
                     for e in extra]
            if "STABLE" in CONFIGS[k][1]:
                label += f" from epoch {stable}"
            log = train(bin_dir, f"{onnx}-{k}", model, data, epochs, extra, quick)
            acc = log["test_accuracy"]
            last = log["epochs"][-1]
            ms = float(np.median([e["ms_per_step"] for e in log["epochs"]]))
            if base is None:
                base = acc
                counts, fewer = "every step", "1"
            else:
                done = last["recomputations"]
                due = done + last["recomputations_saved"]
                counts, fewer = f"{done} of {due}", f"{due / done:.1f}x"
            print(f"| {name} | {epochs} | {label} | {acc:.2f}% ({acc - base:+.2f}) | "
                  f"{counts} | {fewer} | {ms:.2f} |")


if __name__ == "__main__":
    main()
