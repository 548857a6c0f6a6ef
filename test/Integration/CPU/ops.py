# RUN: %python %s tq-run tq-opt | FileCheck %s
# The rest of the tq ops compiled by tq-to-cpu, bit for bit against the
# numpy reference: tq.postprocess (T6: given or computed layer scale, ReLU,
# requantization into tiles), tq.requantize (new tiles and width, and the
# transposing requantize of 1xV tiles), tq.transpose (T4: data and steps
# permuted, nothing requantized), tq.weight_update (T7); then whole
# programs: the training step of docs/examples (forward, dX, dW through
# transposes, weight update, power-of-two weights) and a two-layer MLP
# quantized by tq-quantize, on every SIMD path.
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner, host_targets, report_targets
from tq.examples import mlp_mlir
from tq.ppu import Flow

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
flow = Flow(opt=sys.argv[2])
rng = np.random.default_rng(5)
F32 = np.float32
failures = cases = 0


def check(name, got, want):
    global failures, cases
    cases += 1
    if not (got.shape == want.shape and np.array_equal(got, want)):
        failures += 1
        print(f"MISMATCH {name}")


def T(shape, bits, tile, scale="f32", storage=None):
    storage = storage or ("i8" if bits <= 8 else "i16")
    return (f"!tq.tiled<{shape[0]}x{shape[1]}x{storage}:{bits}, f32, "
            f"tile = {tile[0]}x{tile[1]}, dims = [0, 1], scale = {scale}>")


def quantize(x, tile, bits=8, form="scaled"):
    q, s, _, _ = ref.quantize(x, tile, (0, 1), bits, form)
    return q, s


# tq.postprocess
L = (rng.standard_normal((19, 26)) * 7).astype(F32)
L[0, 0], L[3, 4] = np.nan, np.inf
for mode in ("given", "computed", "none"):
    for relu in (False, True):
        ty = T((19, 26), 6, (8, 8))
        attrs = []
        if relu:
            attrs.append("activation = #tq.activation<relu>")
        if mode == "computed":
            attrs.append("compute_layer_scale")
        operand = " layer_scale(%s)" if mode == "given" else ""
        attr = " {" + ", ".join(attrs) + "}" if attrs else ""
        src = f"""
func.func @main(%l: tensor<19x26xf32>, %s: f32) -> ({ty}, f32) {{
  %y, %a = tq.postprocess %l{operand}{attr} : tensor<19x26xf32> -> {ty}
  return %y, %a : {ty}, f32
}}"""
        q, s, applied = cpu.run(src, [L, np.array(0.37, F32)], outputs=3)
        if mode == "given":
            ls = F32(0.37)
        elif mode == "computed":
            ls = F32(np.abs(L[np.isfinite(L)]).max() / F32(31))
        else:
            ls = F32(1)
        y = (L / ls).astype(F32)
        if relu:
            y = np.where(y < 0, F32(0), y)
        rq, rs = quantize(y, (8, 8), 6)
        check(f"postprocess {mode} relu={relu}", q.astype(np.int32), rq)
        check(f"postprocess {mode} relu={relu} steps", s, rs)
        check(f"postprocess {mode} relu={relu} scale", applied, np.array(ls, F32))

# Stochastic rounding, as a stochastic gradient quantization fused into
# post-processing gets it (the computed layer scale and ReLU).
ty = T((19, 26), 4, (8, 8))
src = f"""
func.func @main(%l: tensor<19x26xf32>) -> ({ty}, f32) {{
  %y, %a = tq.postprocess %l rounding stochastic {{activation = #tq.activation<relu>, compute_layer_scale, seed = 9 : i64}} : tensor<19x26xf32> -> {ty}
  return %y, %a : {ty}, f32
}}"""
q, s, applied = cpu.run(src, [L], outputs=3)
rq, rs, _, rl = ref.postprocess(L, (8, 8), (0, 1), 4, "scaled", compute_layer_scale=True,
                                relu=True, rounding="stochastic", seed=9)
check("postprocess stochastic", q.astype(np.int32), rq)
check("postprocess stochastic steps", s, rs)
check("postprocess stochastic scale", applied, np.array(rl, F32))

# tq.requantize: 8-bit 16x16 -> 4-bit 8x8; 1x16 -> its transpose as 16x1.
x = rng.standard_normal((21, 35)).astype(F32)
qx, sx = quantize(x, (16, 16))
deq = ref.dequantize(qx, sx, np.zeros_like(sx), (16, 16), (0, 1))
src = f"""
func.func @main(%q: {T((21, 35), 8, (16, 16))}) -> {T((21, 35), 4, (8, 8))} {{
  %r = tq.requantize %q : {T((21, 35), 8, (16, 16))} -> {T((21, 35), 4, (8, 8))}
  return %r : {T((21, 35), 4, (8, 8))}
}}"""
q, s = cpu.run(src, [qx.astype(np.int8), sx], outputs=2)
rq, rs = quantize(deq, (8, 8), 4)
check("requantize", q.astype(np.int32), rq)
check("requantize steps", s, rs)
qv, sv = quantize(x, (1, 16))
src = f"""
func.func @main(%q: {T((21, 35), 8, (1, 16))}) -> {T((35, 21), 8, (1, 16))} {{
  %r = tq.requantize %q permutation([1, 0]) : {T((21, 35), 8, (1, 16))} -> {T((35, 21), 8, (1, 16))}
  return %r : {T((35, 21), 8, (1, 16))}
}}"""
q, s = cpu.run(src, [qv.astype(np.int8), sv], outputs=2)
rq, rs = quantize(ref.dequantize(qv, sv, np.zeros_like(sv), (1, 16), (0, 1)).T.copy(),
                  (1, 16))
check("requantize permutation", q.astype(np.int32), rq)
check("requantize permutation steps", s, rs)

# tq.transpose: square tiles keep every step (T4).
src = f"""
func.func @main(%q: {T((21, 35), 8, (16, 16))}) -> {T((35, 21), 8, (16, 16))} {{
  %t = tq.transpose %q [1, 0] : {T((21, 35), 8, (16, 16))} -> {T((35, 21), 8, (16, 16))}
  return %t : {T((35, 21), 8, (16, 16))}
}}"""
q, s = cpu.run(src, [qx.astype(np.int8), sx], outputs=2)
check("transpose", q.astype(np.int32), qx.T)
check("transpose steps", s, sx.T)


def T4(shape, bits, dims):
    storage = "i8" if bits <= 8 else "i16"
    return (f"!tq.tiled<{'x'.join(map(str, shape))}x{storage}:{bits}, f32, "
            f"tile = 16x16, dims = [{dims[0]}, {dims[1]}], scale = f32>")


# tq.transpose of NCHW tiles to NHWC ([0, 2, 3, 1]) and to CHWN ([1, 2, 3,
# 0]), as the convolutions and their weight gradients read them: blocks of
# 16 x 16 transposed in registers, with partial blocks along both sides,
# 8-bit and 12-bit (int16) values and f32 steps, on 1 and 2 threads.
# Then whole blocks only (16 channels, 32 pixels; 32 images), and a tile
# grid large enough for its f32 steps to take the blocks too.
for shape, bits in (((37, 20, 5, 7), 8), ((37, 20, 5, 7), 12), ((32, 16, 4, 8), 8),
                    ((48, 160, 3, 4), 8)):
    x4 = (rng.standard_normal(shape) * 3).astype(F32)
    q4, s4, _, _ = ref.quantize(x4, (16, 16), (0, 1), bits, "scaled")
    container = np.int8 if bits <= 8 else np.int16
    for perm, dims in (((0, 2, 3, 1), (0, 3)), ((1, 2, 3, 0), (0, 3))):
        shape = tuple(x4.shape[d] for d in perm)
        src = f"""
func.func @main(%q: {T4(x4.shape, bits, (0, 1))}) -> {T4(shape, bits, dims)} {{
  %t = tq.transpose %q [{', '.join(map(str, perm))}] : {T4(x4.shape, bits, (0, 1))} -> {T4(shape, bits, dims)}
  return %t : {T4(shape, bits, dims)}
}}"""
        for target in TARGETS:
            for threads in (1, 2):
                q, s = cpu.run(src, [q4.astype(container), s4], target=target,
                               threads=threads, outputs=2)
                name = f"transpose {perm} {bits}-bit {target} threads={threads}"
                check(name, q.astype(np.int32), q4.transpose(perm))
                check(name + " steps", s, s4.transpose(perm))

# tq.weight_update with a float and a tiled gradient.
w = rng.standard_normal((24, 20)).astype(F32)
dw = rng.standard_normal((24, 20)).astype(F32)
qw, sw = quantize(w, (8, 8), 6, "pow2")
qd, sd = quantize(dw, (8, 8))
wt = T((24, 20), 6, (8, 8), "pow2")
for tiled_grad in (False, True):
    gt = T((24, 20), 8, (8, 8)) if tiled_grad else "tensor<24x20xf32>"
    src = f"""
func.func @main(%w: {wt}, %g: {gt}, %lr: f32) -> {wt} {{
  %u = tq.weight_update %w, %g, %lr : {wt}, {gt}
  return %u : {wt}
}}"""
    grad = [qd.astype(np.int8), sd] if tiled_grad else [dw]
    q, s = cpu.run(src, [qw.astype(np.int8), sw, *grad, np.array(0.05, F32)],
                   outputs=2)
    g = ref.dequantize(qd, sd, np.zeros_like(sd), (8, 8), (0, 1)) if tiled_grad else dw
    new = (ref.dequantize(qw, sw, np.zeros_like(sw), (8, 8), (0, 1))
           - (F32(0.05) * g).astype(F32)).astype(F32)
    rq, rs = quantize(new, (8, 8), 6, "pow2")
    check(f"weight_update tiled_grad={tiled_grad}", q.astype(np.int32), rq)
    check(f"weight_update tiled_grad={tiled_grad} steps", s, rs)

# The training step of docs/examples/train-step.mlir.
import os
example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "..", "docs", "examples", "train-step.mlir")
xf = rng.standard_normal((4, 8)).astype(F32)
dyf = rng.standard_normal((4, 4)).astype(F32)
wf = np.array([[0.5, -0.25, 0.125, 1.0], [-1.0, 0.75, 0.0, 0.5],
               [0.25, 0.25, -0.5, 0.0], [0.0, -0.125, 0.375, -0.75],
               [2.0, 1.0, -2.0, 0.5], [-0.5, 0.0, 1.5, -1.0],
               [1.0, -1.5, 0.25, 0.0], [0.75, 0.5, -0.25, 2.0]], F32)
with open(example) as f:
    text = f.read()
for target in TARGETS:
    y, dx, qw2, sw2 = cpu.run(text, [xf, dyf, np.array(0.125, F32)],
                              target=target, entry="train_step", outputs=4)
    t4 = (4, 4)
    qw, sw = quantize(wf, t4, 4, "pow2")
    qx, sx = quantize(xf, t4)
    qdy, sdy = quantize(dyf, t4)
    check(f"train_step y {target}", y, ref.matmul(qx, sx, t4, qw, sw, t4))
    check(f"train_step dx {target}", dx, ref.matmul(qdy, sdy, t4, qw.T, sw.T, t4))
    dwr = ref.matmul(qx.T, sx.T, t4, qdy, sdy, t4)
    new = (ref.dequantize(qw, sw, np.zeros_like(sw), t4, (0, 1))
           - (F32(0.125) * dwr).astype(F32)).astype(F32)
    rq, rs = quantize(new, t4, 4, "pow2")
    check(f"train_step w {target}", qw2.astype(np.int32), rq)
    check(f"train_step w steps {target}", sw2, rs)

# A two-layer MLP quantized by tq-quantize (runtime and constant weights).
M, K, H, N = 9, 20, 12, 5
x = rng.standard_normal((M, K)).astype(F32)
w1 = rng.standard_normal((K, H)).astype(F32)
w2 = rng.standard_normal((H, N)).astype(F32)
for v in (8, 16, 32):
    for scale, form in (("f32", "scaled"), ("pow2", "pow2")):
        t = (v, v)
        qx, sx = quantize(x, t, 8, form)
        qw1, sw1 = quantize(w1, t, 8, form)
        h = np.maximum(ref.matmul(qx, sx, t, qw1, sw1, t), F32(0))
        qh, sh = quantize(h, t, 8, form)
        qw2, sw2 = quantize(w2, t, 8, form)
        want = ref.matmul(qh, sh, t, qw2, sw2, t)
        for const in (False, True):
            src = flow.write("mlp.mlir", mlp_mlir(M, K, H, N, weights=(w1, w2) if const else None))
            q = flow.opt(src, f"-tq-quantize=tile={v} scale={scale}")
            with open(q) as f:
                text = f.read()
            inputs = [x] if const else [x, w1, w2]
            for target in TARGETS:
                got, = cpu.run(text, inputs, target=target, entry="mlp")
                check(f"mlp V={v} {scale} const={const} {target}", got, want)

print(f"op cases per target: {cases // len(TARGETS)}, "
      f"mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: op cases per target: {{[1-9][0-9]*}}, mismatches: 0
