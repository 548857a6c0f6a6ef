# RUN: %python %s tq-run | FileCheck %s
# Clamps by a constant (tq-cpu-select-clamps: maximumf and minimumf with a
# constant as a compare and a select) give the bits IEEE 754-2019's
# maximum and minimum do: NaN propagates, -0 orders below +0. The
# reference is written from that definition; the inputs hold ±0, NaN,
# ±Inf, the constants themselves, their neighbours and the extremes,
# next to random values, in a length that is not whole vectors. Each
# constant is taken as the first and as the second operand.
import sys

import numpy as np

from tq.cpu import Runner, bits_differ, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(5)
failures = cases = 0

SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 6.0, -1.0, 3.0,
                    np.nextafter(np.float32(6), np.float32(7)),
                    np.nextafter(np.float32(6), np.float32(5)),
                    np.nextafter(np.float32(-1), np.float32(-2)),
                    1e-45, -1e-45, 3.4e38, -3.4e38], dtype=np.float32)


def ieee(x, c, is_max):
    """maximum(x, c) or minimum(x, c) of IEEE 754-2019, element by element."""
    c = np.float32(c)
    pick = x > c if is_max else x < c
    r = np.where(pick, x, c).astype(np.float32)
    zeros = (x == 0) & (c == 0)
    # Of two zeros the max is -0 only if both are, the min +0 only if both are.
    neg = np.signbit(x) & np.signbit(c) if is_max else np.signbit(x) | np.signbit(c)
    r = np.where(zeros, np.where(neg, np.float32(-0.0), np.float32(0.0)), r)
    return np.where(np.isnan(x), x, r).astype(np.float32)


def clamps(n):
    global failures, cases
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[rng.choice(n, size=n // 3, replace=False)] = rng.choice(SPECIAL, size=n // 3)
    # (op, constant, constant first) for each output.
    ops = [("maximumf", 0.0, False), ("maximumf", 0.0, True),
           ("minimumf", 6.0, False), ("maximumf", -1.0, True),
           ("minimumf", -0.0, False), ("maximumf", 3.0, False),
           ("maximumf", -0.0, False), ("minimumf", 0.0, True)]
    t = f"tensor<{n}xf32>"
    bodies, results = [], []
    for i, (op, c, first) in enumerate(ops):
        a, b = ("%k", "%v") if first else ("%v", "%k")
        bodies.append(f"""
  %r{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%x : {t}) outs(%e : {t}) {{
    ^bb0(%v: f32, %o: f32):
      %k = arith.constant {c!r} : f32
      %m = arith.{op} {a}, {b} : f32
      linalg.yield %m : f32
  }} -> {t}""")
        results.append(f"%r{i}")
    src = f"""
#id = affine_map<(i) -> (i)>
func.func @main(%x: {t}) -> ({", ".join([t] * len(ops))}) {{
  %e = tensor.empty() : {t}{"".join(bodies)}
  return {", ".join(results)} : {", ".join([t] * len(ops))}
}}"""
    for target in TARGETS:
        for threads in (1, 2):
            got = cpu.run(src, [x], target=target, threads=threads, outputs=len(ops))
            for (op, c, first), y in zip(ops, got):
                cases += 1
                want = ieee(x, c, op == "maximumf")
                differ = bits_differ(y, want)
                if differ.any():
                    failures += 1
                    i = np.flatnonzero(differ)[0]
                    print(f"MISMATCH {op}({c}) n={n} {target} threads={threads}: "
                          f"{differ.sum()} elements, first x={x[i]}: {y[i]} vs {want[i]}")


clamps(1000)
clamps(13)

print(f"clamp cases: {cases}, mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: clamp cases: {{[1-9][0-9]*}}, mismatches: 0
