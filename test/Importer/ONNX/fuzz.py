# RUN: %python %s tq-import-onnx %S/Inputs/mlp.onnxtxt | FileCheck %s
# Corrupt and truncated model files get an error, never a crash: a binary
# model (built with Debian's python3-onnx from the text form) is truncated
# at random points and has random bytes flipped; every run must exit 0
# (the damage left a valid model) or 1 with "tq-import-onnx: error:".
import random
import subprocess
import sys
import tempfile

import onnx
import onnx.parser

tool, source = sys.argv[1], sys.argv[2]
with open(source) as f:
    model = onnx.parser.parse_model(f.read())
data = bytearray(model.SerializeToString())
rng = random.Random(1234)
work = tempfile.mkdtemp(prefix="tq-onnx-fuzz-")
outcomes = {"imported": 0, "rejected": 0, "crashed": 0}
for trial in range(60):
    mutated = bytearray(data)
    if trial % 3 == 0:
        mutated = mutated[: rng.randrange(len(mutated))]
    else:
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
    path = f"{work}/m{trial}.onnx"
    with open(path, "wb") as f:
        f.write(mutated)
    p = subprocess.run([tool, path, "--input-shape=x:2x4", "-o", "/dev/null"],
                       capture_output=True, text=True, errors="replace")
    if p.returncode == 0:
        outcomes["imported"] += 1
    elif p.returncode == 1 and p.stderr.startswith("tq-import-onnx: error:"):
        outcomes["rejected"] += 1
    else:
        outcomes["crashed"] += 1
        print(f"CRASH exit {p.returncode} on mutation {trial}: {p.stderr[:300]}")
print(f"crashed {outcomes['crashed']}")
print(f"rejected {outcomes['rejected'] > 0}")
# CHECK-NOT: CRASH
# CHECK: crashed 0
# CHECK: rejected True
