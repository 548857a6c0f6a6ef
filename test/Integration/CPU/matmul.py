# RUN: %python %s tq-run | FileCheck %s
# tq.matmul compiled by tq-to-cpu and run on every SIMD path of this
# machine (avx512 and avxvnni: vpdpbusd on 16 / 8 lanes; avx2: vpmaddwd on
# int16 pairs, or vpmaddubsw on the bytes of an A marked not negative;
# generic vectors), bit
# for bit against the numpy reference (T5, T7): C = A·B, dX = dY·Wᵀ
# (transpose_b), dW = Xᵀ·dY (transpose_a); V = 8, 16, 32, 128 with shapes
# that are not multiples of V; widths 2, 4, 8 (i8), 12 and 16 (i16 with an
# 8-bit partner: vpmaddwd on x86, else the generic kernel); the bf16 scale product; batches; the
# mixed tiled x f32 product;
# weights
# packed at compile time (tq.constant) or at run time; 1 and 2 threads;
# operands at ±qmax everywhere (the int32 partial sums near their bound).
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(11)
failures = cases = 0


def tiled(shape, storage, bits, tile):
    return (f"!tq.tiled<{shape[0]}x{shape[1]}x{storage}:{bits}, f32, "
            f"tile = {tile[0]}x{tile[1]}, dims = [0, 1], scale = f32>")


def storage_of(bits):
    return "i8" if bits <= 8 else "i16"


def operand(shape, bits, tile, extreme=False):
    """A quantized operand: (q, steps) from the reference quantizer."""
    x = rng.standard_normal(shape).astype(np.float32)
    if extreme:
        x = np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(np.float32)
    q, s, _, _ = ref.quantize(x, tile, (0, 1), bits, "scaled")
    return q, s


def dense_attr(values, dtype):
    body = ", ".join("[" + ", ".join(str(v) for v in row) + "]" for row in values)
    return f"dense<[{body}]> : tensor<{values.shape[0]}x{values.shape[1]}x{dtype}>"


def f32_attr(values):
    body = ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in values)
    return f"dense<[{body}]> : tensor<{values.shape[0]}x{values.shape[1]}xf32>"


def case(M, N, K, v, bits=(8, 8), trans_a=False, trans_b=False, bf16=False,
         const_b=False, targets=TARGETS, threads=(1,), extreme=False, nonneg=False):
    """`nonneg`: A's values are not negative (|A|), and the op says so
    (tq.nonnegative_input: vpmaddubsw on AVX2)."""
    global failures, cases
    a_shape = (K, M) if trans_a else (M, K)
    b_shape = (N, K) if trans_b else (K, N)
    qa, sa = operand(a_shape, bits[0], (v, v), extreme)
    if nonneg:
        qa = np.abs(qa)
    qb, sb = operand(b_shape, bits[1], (v, v), extreme)
    ta = tiled(a_shape, storage_of(bits[0]), bits[0], (v, v))
    tb = tiled(b_shape, storage_of(bits[1]), bits[1], (v, v))
    attrs = [n for n, on in (("transpose_a", trans_a), ("transpose_b", trans_b)) if on]
    if bf16:
        attrs.append("scale_product = #tq.scale_product<bf16>")
    if nonneg:
        attrs.append("tq.nonnegative_input")
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    out = f"tensor<{M}x{N}xf32>"
    if const_b:
        src = f"""
func.func @main(%a: {ta}) -> {out} {{
  %b = tq.constant {{values = {dense_attr(qb, storage_of(bits[1]))}, scales = {f32_attr(sb)}}} : {tb}
  %c = tq.matmul %a, %b{attr} : {ta}, {tb} -> {out}
  return %c : {out}
}}
"""
        inputs = [qa.astype(storage_of(bits[0]).replace("i", "int")), sa]
    else:
        src = f"""
func.func @main(%a: {ta}, %b: {tb}) -> {out} {{
  %c = tq.matmul %a, %b{attr} : {ta}, {tb} -> {out}
  return %c : {out}
}}
"""
        inputs = [qa.astype(storage_of(bits[0]).replace("i", "int")), sa,
                  qb.astype(storage_of(bits[1]).replace("i", "int")), sb]
    # op(A), op(B) for the reference: transposition keeps every scale (T4).
    oa, osa = (qa.T, sa.T) if trans_a else (qa, sa)
    ob, osb = (qb.T, sb.T) if trans_b else (qb, sb)
    want = ref.matmul(oa, osa, (v, v), ob, osb, (v, v),
                      "bf16" if bf16 else "exact")
    for target in targets:
        for t in threads:
            cases += 1
            got, = cpu.run(src, inputs, target=target, threads=t)
            if not np.array_equal(got, want):
                failures += 1
                print(f"MISMATCH M={M} N={N} K={K} V={v} bits={bits} "
                      f"tA={trans_a} tB={trans_b} bf16={bf16} const={const_b} "
                      f"{target} threads={t}: max diff "
                      f"{np.abs(got - want).max()}")


for v, (M, N, K) in ((8, (13, 37, 21)), (16, (20, 36, 40)), (32, (33, 65, 70)),
                     (128, (7, 130, 260))):
    case(M, N, K, v)
case(20, 36, 40, 16, trans_a=True)
case(20, 36, 40, 16, trans_b=True)
# Bᵀ of whole K-tiles packed a group of k at a time, a panel past N.
case(20, 36, 48, 16, trans_b=True, threads=(1, 2))
case(9, 16, 96, 32, trans_b=True, bits=(8, 12))
# Bᵀ of whole blocks of 16 groups: the panel transposed as 32-bit words in
# blocks of 16 x 16, rows past N (36 and 70) zeros; extreme values.
case(20, 36, 64, 16, trans_b=True, threads=(1, 2))
case(9, 70, 128, 32, trans_b=True, threads=(1, 2), extreme=True)
# B (K×N) of whole K-tiles: a group of k of a panel as vectors of rows,
# interleaved; panels past N (36 and 70 columns) masked.
case(20, 36, 48, 16, threads=(1, 2))
case(9, 70, 64, 32, threads=(1, 2))
# A widened for vpmaddwd 16 bytes at a time, the rest of each row (K = 24:
# 8 bytes) one by one, with extreme values.
case(21, 19, 24, 8, threads=(1, 2), extreme=True)
case(25, 19, 33, 8, trans_a=True, trans_b=True)
case(20, 36, 40, 16, bf16=True)
case(45, 70, 96, 32, const_b=True, threads=(1, 2))
case(14, 50, 40, 16, const_b=True, trans_b=True)
case(1, 300, 256, 128, const_b=True)
for bits in ((2, 2), (4, 4), (4, 8)):
    case(19, 23, 29, 8, bits=bits)
# 4-bit constant weights are packed two per byte (nibbles) for vpdpbusd.
for v, (M, N, K) in ((8, (13, 37, 21)), (32, (33, 65, 70)), (128, (1, 130, 300))):
    case(M, N, K, v, bits=(8, 4), const_b=True)
case(20, 36, 40, 16, bits=(4, 4), const_b=True, trans_b=True, extreme=True)
case(17, 18, 40, 16, bits=(12, 8))
case(9, 20, 130, 128, bits=(16, 8), extreme=True)
case(30, 40, 256, 128, extreme=True)
# K-tiles of 32 steps in a loop by 4, the last one's stopping after 11
# (K = 300: 44 values), next to extreme values.
case(7, 130, 300, 128, extreme=True, threads=(1, 2))
case(64, 96, 128, 32, threads=(2,))
# At most one vector of columns and 7 to 12 rows (5 on AVX2 and generic):
# one micro-tile of one vector per row, also with nibbles.
case(9, 16, 64, 16, bits=(8, 4), const_b=True, extreme=True)
case(5, 12, 40, 8, threads=(1, 2))
# A not negative, marked so (vpmaddubsw on AVX2): B packed at run time and
# transposed, constant, a short last K-tile, Aᵀ, 2 threads, and extreme
# values (every A 127 against weights of ±127: the largest pair sums).
case(20, 36, 48, 16, trans_b=True, nonneg=True)
case(45, 70, 96, 32, const_b=True, threads=(1, 2), nonneg=True)
case(25, 19, 33, 8, trans_a=True, nonneg=True)
case(9, 70, 128, 32, trans_b=True, threads=(1, 2), extreme=True, nonneg=True)



def batched(batch, M, N, K, v, trans_a=False, trans_b=False):
    """Leading batch dims: one product per batch index, same tiles."""
    global failures, cases
    a_shape = batch + ((K, M) if trans_a else (M, K))
    b_shape = batch + ((N, K) if trans_b else (K, N))
    xa = rng.standard_normal(a_shape).astype(np.float32)
    xb = rng.standard_normal(b_shape).astype(np.float32)
    r = len(a_shape)
    qa, sa, _, _ = ref.quantize(xa, (v, v), (r - 2, r - 1), 8, "scaled")
    qb, sb, _, _ = ref.quantize(xb, (v, v), (r - 2, r - 1), 8, "scaled")

    def ty(shape):
        return (f"!tq.tiled<{'x'.join(map(str, shape))}xi8:8, f32, tile = {v}x{v}, "
                f"dims = [{r - 2}, {r - 1}], scale = f32>")
    out_shape = batch + (M, N)
    out = f"tensor<{'x'.join(map(str, out_shape))}xf32>"
    attrs = [n for n, on in (("transpose_a", trans_a), ("transpose_b", trans_b)) if on]
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    src = f"""
func.func @main(%a: {ty(a_shape)}, %b: {ty(b_shape)}) -> {out} {{
  %c = tq.matmul %a, %b{attr} : {ty(a_shape)}, {ty(b_shape)} -> {out}
  return %c : {out}
}}
"""
    want = np.zeros(out_shape, np.float32)
    for idx in np.ndindex(*batch):
        oa, osa = (qa[idx].T, sa[idx].T) if trans_a else (qa[idx], sa[idx])
        ob, osb = (qb[idx].T, sb[idx].T) if trans_b else (qb[idx], sb[idx])
        want[idx] = ref.matmul(oa, osa, (v, v), ob, osb, (v, v))
    for target in TARGETS:
        cases += 1
        got, = cpu.run(src, [qa.astype(np.int8), sa, qb.astype(np.int8), sb],
                       target=target)
        if not np.array_equal(got, want):
            failures += 1
            print(f"MISMATCH batched {batch} M={M} N={N} K={K} V={v} "
                  f"tA={trans_a} tB={trans_b} {target}")




def mixed(M, N, K, v, tiled_a=True, trans_a=False, trans_b=False):
    """One operand tiled, the other f32: per K-tile an f32 partial sum (k
    ascending, multiply then add) times the tiled operand's step."""
    global failures, cases
    a_shape = (K, M) if trans_a else (M, K)
    b_shape = (N, K) if trans_b else (K, N)
    xa = rng.standard_normal(a_shape).astype(np.float32)
    xb = rng.standard_normal(b_shape).astype(np.float32)
    x, y = (xa.T if trans_a else xa), (xb.T if trans_b else xb)
    if tiled_a:
        q, st = operand(a_shape, 8, (v, v))
        qo, so = (q.T, st.T) if trans_a else (q, st)
        x = qo.astype(np.float32)
    else:
        q, st = operand(b_shape, 8, (v, v))
        qo, so = (q.T, st.T) if trans_b else (q, st)
        y = qo.astype(np.float32)
    want = np.zeros((M, N), np.float32)
    for t, k0 in enumerate(range(0, K, v)):
        ps = np.zeros((M, N), np.float32)
        for k in range(k0, min(K, k0 + v)):
            ps = (ps + (x[:, k, None] * y[None, k, :]).astype(np.float32)).astype(np.float32)
        if tiled_a:
            scale = np.repeat(so[:, t], v)[:M].astype(np.float32)[:, None]
        else:
            scale = np.repeat(so[t, :], v)[:N].astype(np.float32)[None, :]
        want = (want + (ps * scale).astype(np.float32)).astype(np.float32)
    tq_ty = tiled(a_shape if tiled_a else b_shape, "i8", 8, (v, v))
    f_ty = "tensor<{}x{}xf32>".format(*(b_shape if tiled_a else a_shape))
    ta, tb = (tq_ty, f_ty) if tiled_a else (f_ty, tq_ty)
    attrs = [n for n, on in (("transpose_a", trans_a), ("transpose_b", trans_b)) if on]
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    out = f"tensor<{M}x{N}xf32>"
    src = f"""
func.func @main(%a: {ta}, %b: {tb}) -> {out} {{
  %c = tq.matmul %a, %b{attr} : {ta}, {tb} -> {out}
  return %c : {out}
}}
"""
    inputs = ([q.astype(np.int8), st, xb] if tiled_a else [xa, q.astype(np.int8), st])
    for target in TARGETS:
        cases += 1
        got, = cpu.run(src, inputs, target=target)
        if not np.array_equal(got, want):
            failures += 1
            print(f"MISMATCH mixed M={M} N={N} K={K} V={v} tiled_a={tiled_a} "
                  f"tA={trans_a} tB={trans_b} {target}: max diff "
                  f"{np.abs(got - want).max()}")


mixed(13, 37, 21, 8)
mixed(13, 37, 21, 8, tiled_a=False)
mixed(20, 18, 40, 16, tiled_a=False, trans_b=True)
mixed(9, 33, 20, 16, trans_a=True)
batched((2, 3), 9, 12, 20, 8)
batched((4,), 17, 10, 24, 16, trans_b=True)

print(f"matmul cases per target: {cases // len(TARGETS)}, "
      f"mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: matmul cases per target: 53, mismatches: 0
