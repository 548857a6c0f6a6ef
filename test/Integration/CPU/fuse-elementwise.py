# RUN: %python %s tq-run | FileCheck %s
# Fused elementwise chains (tq-cpu-fuse-elementwise: a layout transpose, a
# bias add, an activation, then a scale, fused into one loop nest) give the
# same bits as the ops one at a time: numpy computes each op on its own,
# materializing every intermediate tensor. Data with NaN, ±Inf, -0 and
# values near FLT_MAX (overflow in the add); 1 and 2 threads (the fused
# nest is then shared among the threads).
import sys

import numpy as np

from tq.cpu import Runner, bits_differ, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(9)
failures = cases = 0


def ty(shape):
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def chain(n, h, w, c, activation):
    global failures, cases
    x = rng.standard_normal((n, h, w, c)).astype(np.float32) * 4
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=flat.size // 10, replace=False)
    flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 3.3e38, -3.3e38],
                                      dtype=np.float32), size=picks.size)
    bias = rng.standard_normal(c).astype(np.float32)
    bias[0] = 3.3e38
    scale = np.float32(0.37)
    # The ops one at a time.
    t = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    with np.errstate(all="ignore"):
        a = (t + bias[None, :, None, None]).astype(np.float32)
        if activation == "relu":
            r = np.where(np.isnan(a), a, np.maximum(a, np.float32(0)))
            body = "%z = arith.constant 0.0 : f32\n      %m = arith.maximumf %v, %z : f32"
        else:  # clip to [-1, 6]
            r = np.where(np.isnan(a), a, np.minimum(np.maximum(a, np.float32(-1)),
                                                    np.float32(6)))
            body = ("%lo = arith.constant -1.0 : f32\n      %hi = arith.constant 6.0 : f32\n"
                    "      %m0 = arith.maximumf %v, %lo : f32\n"
                    "      %m = arith.minimumf %m0, %hi : f32")
        want = (r * scale).astype(np.float32)
    tx, tb, to = ty(x.shape), ty(bias.shape), ty(want.shape)
    src = f"""
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias = affine_map<(n, c, h, w) -> (c)>
func.func @main(%x: {tx}, %b: {tb}) -> {to} {{
  %e = tensor.empty() : {to}
  %t = linalg.transpose ins(%x : {tx}) outs(%e : {to}) permutation = [0, 3, 1, 2]
  %a = linalg.generic {{indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%t, %b : {to}, {tb}) outs(%e : {to}) {{
    ^bb0(%v: f32, %w: f32, %o: f32):
      %s = arith.addf %v, %w : f32
      linalg.yield %s : f32
  }} -> {to}
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%a : {to}) outs(%e : {to}) {{
    ^bb0(%v: f32, %o: f32):
      {body}
      linalg.yield %m : f32
  }} -> {to}
  %y = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%r : {to}) outs(%e : {to}) {{
    ^bb0(%v: f32, %o: f32):
      %k = arith.constant {float(scale)!r} : f32
      %p = arith.mulf %v, %k : f32
      linalg.yield %p : f32
  }} -> {to}
  return %y : {to}
}}"""
    for target in TARGETS:
        for threads in (1, 2):
            got, = cpu.run(src, [x, bias], target=target, threads=threads)
            cases += 1
            differ = bits_differ(got, want)
            if differ.any():
                failures += 1
                i = np.flatnonzero(differ)[0]
                print(f"MISMATCH {(n, h, w, c)} {activation} {target} threads={threads}: "
                      f"{differ.sum()} elements, first {got.reshape(-1)[i]} vs "
                      f"{want.reshape(-1)[i]}")


chain(2, 5, 7, 3, "relu")
chain(64, 14, 14, 16, "relu")
chain(3, 9, 4, 33, "clip")

print(f"fused chain cases: {cases}, mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: fused chain cases: {{[1-9][0-9]*}}, mismatches: 0
