# RUN: %python %s tq-ppu-sim | FileCheck %s
# The PPU simulator runs listings of a layer's forward and backward GEMMs
# (dX = dY.W^T, dW = X^T.dY, transposed operands read through LOAD's
# transpose) on shapes that are not multiples of V; its outputs equal the
# independent numpy reference (python/tq/reference.py) bit for bit. Then the
# same dX with per-vector scaling: requantizations appear.
import sys

import numpy as np

from tq import reference as ref
from tq.ppu import Flow

flow = Flow(sim=sys.argv[1])
rng = np.random.default_rng(5)


def tiles(n, v):
    return -(-n // v)


def listing(v, a_shape, b_shape, ta, tb, m, n, k, bits_a=8, bits_b=8,
            a_layout="", b_layout="", req_a="", req_b=""):
    """C = op(A) . op(B); A and B quantized in fmem order into ub."""
    at, bt = tiles(a_shape[0], v) * tiles(a_shape[1], v), tiles(b_shape[0], v) * tiles(b_shape[1], v)
    lines = [f"ppu v1 V={v} mac={v} ub={at + bt} rows=2 acc=1 fmem={at + bt + tiles(m, v) * tiles(n, v)}",
             f"input a {a_shape[0]}x{a_shape[1]} @0",
             f"input b {b_shape[0]}x{b_shape[1]} @{at}",
             f"output c {m}x{n} @{at + bt}"]
    lines += [f"quant ub[{t}] <- fmem[{t}] bits={bits_a} {a_layout}" for t in range(at)]
    lines += [f"quant ub[{at + t}] <- fmem[{at + t}] bits={bits_b} {b_layout}" for t in range(bt)]
    if req_a:
        lines += [f"req ub[{t}] <- ub[{t}] bits={bits_a} {req_a}" for t in range(at)]
    if req_b:
        lines += [f"req ub[{at + t}] <- ub[{at + t}] bits={bits_b} {req_b}" for t in range(bt)]
    acols, bcols = tiles(a_shape[1], v), tiles(b_shape[1], v)
    for i in range(tiles(m, v)):
        for j in range(tiles(n, v)):
            for t in range(tiles(k, v)):
                a_slot = t * acols + i if ta else i * acols + t
                b_slot = at + (j * bcols + t if tb else t * bcols + j)
                lines.append(f"load a[0] <- ub[{a_slot}]" + (" transpose" if ta else ""))
                lines.append(f"load b[0] <- ub[{b_slot}]" + (" transpose" if tb else ""))
                lines.append(f"mac acc[0] {'+=' if t else '='} a[0] * b[0]")
            lines.append(f"store fmem[{at + bt + i * tiles(n, v) + j}] <- acc[0]")
    lines.append("halt")
    return "\n".join(lines) + "\n"


def run(text, a, b):
    (c,), stats = flow.simulate(flow.write("s.txt", text), {"a": a, "b": b}, outputs=("c",),
                                report="json")
    return c, stats


failures = 0
for v in (8, 16):
    M, K, N = 21, 35, 13
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((K, N)).astype(np.float32)
    dy = rng.standard_normal((M, N)).astype(np.float32)
    cases = {
        "forward": (x, w, False, False, M, N, K),
        "dX=dY.W^T": (dy, w, False, True, M, K, N),
        "dW=X^T.dY": (x, dy, True, False, K, N, M),
    }
    for name, (a, b, ta, tb, m, n, k) in cases.items():
        got, stats = run(listing(v, a.shape, b.shape, ta, tb, m, n, k), a, b)
        qa, sa, _, _ = ref.quantize(a, (v, v), (0, 1), 8, "scaled")
        qb, sb, _, _ = ref.quantize(b, (v, v), (0, 1), 8, "scaled")
        if ta:
            qa, sa = qa.T, sa.T
        if tb:
            qb, sb = qb.T, sb.T
        want = ref.matmul(qa, sa, (v, v), qb, sb, (v, v))
        same = got.shape == want.shape and got.tobytes() == want.tobytes()
        failures += not same
        print(f"V={v} {name}: {'bit-exact' if same else 'MISMATCH'}, "
              f"ub reads {stats['ub_reads']}, transposes {stats['transposes']}, "
              f"requantizations {stats['requantizations']}")

# Per-vector scaling: W stored with column vectors (as the forward's b);
# dX = dY.W^T needs row vectors before the transposing load: REQ.
v = 8
_, sq = run(listing(v, dy.shape, w.shape, False, True, M, K, N), dy, w)
_, pv = run(listing(v, dy.shape, w.shape, False, True, M, K, N, a_layout="rows",
                    b_layout="cols", req_b="rows"), dy, w)
print(f"square requantizations {sq['requantizations']}, per-vector requantizations "
      f"{pv['requantizations']}, extra ub reads {pv['ub_reads'] - sq['ub_reads']}")
print(f"failures {failures}")

# CHECK: V=8 forward: bit-exact, ub reads {{[0-9]+}}, transposes 0, requantizations 0
# CHECK: V=8 dX=dY.W^T: bit-exact, {{.*}} requantizations 0
# CHECK: V=8 dW=X^T.dY: bit-exact, {{.*}} requantizations 0
# CHECK: V=16 forward: bit-exact
# CHECK: V=16 dX=dY.W^T: bit-exact
# CHECK: V=16 dW=X^T.dY: bit-exact
# CHECK: square requantizations 0, per-vector requantizations 10, extra ub reads 80
# CHECK: failures 0
