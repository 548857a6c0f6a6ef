# RUN: %python %s tq-run | FileCheck %s
# The elementwise generics of tq-cpu-float-kernels that have several outputs
# or read along their innermost dim at a stride (StridedKernels.cpp),
# compiled by tq-to-cpu and run on every SIMD path at 1 and 2 threads, bit
# for bit against numpy:
#   - a max-pool gradient's routing: the four taps of each 2x2 window read
#     and written as views with a stride of 2, the first tap equal to the
#     window's maximum taking the gradient (ties common, NaN and ±Inf);
#     pooled rows of 1, 4, 7, 14, 20 and 33 (whole vectors and masked
#     tails), odd planes whose last row and column no window covers, and
#     the in-place form of a training step (the taps read from the buffer
#     the gradient is written into);
#   - an update with two outputs reading a transposed operand (a gather)
#     and a scalar;
#   - one output reading a view at a stride of 2 without its partner, from
#     an even and from an odd start;
#   - rows of at most half a vector, two to a vector (the pooled rows of 7
#     and 4 above too): an odd number of rows, views of wider rows read and
#     written, and a value per row broadcast along it.
# NaN payloads are not compared: any NaN matches any NaN.
import sys

import numpy as np

from tq.cpu import Runner, bits_differ, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(11)
failures = cases = 0
f32 = np.float32


def ty(shape):
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def check(name, src, inputs, wants):
    global failures, cases
    for target in TARGETS:
        for threads in (1, 2):
            gots = cpu.run(src, inputs, target=target, threads=threads,
                           outputs=len(wants))
            for k, (got, want) in enumerate(zip(gots, wants)):
                cases += 1
                differ = bits_differ(got, want)
                if differ.any():
                    failures += 1
                    bad = np.flatnonzero(differ)
                    print(f"MISMATCH {name} output {k} {target} "
                          f"threads={threads}: {bad.size} elements, first at "
                          f"{bad[0]}: {got.reshape(-1)[bad[0]]} vs "
                          f"{want.reshape(-1)[bad[0]]}")


def values(shape, special=False):
    """Small multiples of 1/4 (many ties within a window, ±0 included); with
    `special`, some NaN and ±Inf."""
    x = (rng.integers(-6, 7, size=shape) / 4).astype(f32)
    if special:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 10), replace=False)
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf], dtype=f32),
                                 size=picks.size)
    return x


TAPS = ((0, 0), (0, 1), (1, 0), (1, 1))


def route_ref(taps, pooled, dy, relu):
    """The routing's scalar semantics: tap k takes dy where it equals the
    maximum (ordered: NaN equals nothing), no earlier tap did, and, with
    `relu`, it is above 0 or NaN (unordered greater than)."""
    outs, taken = [], np.zeros(pooled.shape, dtype=bool)
    for t in taps:
        eq = t == pooled
        take = eq & ~taken
        if relu:
            take &= ~(t <= 0)
        outs.append(np.where(take, dy, f32(0)).astype(f32))
        taken |= eq
    return outs


def route_body(relu):
    """The body over %t0..%t3, %m (the maximum) and %g (dy)."""
    lines, prev = [], None
    for k in range(4):
        lines.append(f"%e{k} = arith.cmpf oeq, %t{k}, %m : f32")
        cond = f"%e{k}"
        if prev is not None:
            lines.append(f"%n{k} = arith.xori {prev}, %true : i1")
            lines.append(f"%c{k} = arith.andi %e{k}, %n{k} : i1")
            cond = f"%c{k}"
        if relu:
            lines.append(f"%p{k} = arith.cmpf ugt, %t{k}, %zero : f32")
            lines.append(f"%a{k} = arith.andi {cond}, %p{k} : i1")
            cond = f"%a{k}"
        lines.append(f"%r{k} = arith.select {cond}, %g, %zero : f32")
        if prev is None:
            prev = "%e0"
        else:
            lines.append(f"%o{k} = arith.ori {prev}, %e{k} : i1")
            prev = f"%o{k}"
    return "\n      ".join(lines)


def routing(shape, relu=True, inplace=False, special=False):
    """dX of a 2x2, stride-2 max pooling of `shape` (NCHW): the taps of x as
    strided slices, one generic writing the four taps of dX, inserted into
    zeros. With `inplace`, as a training step has it: x is the ReLU of the
    input, computed into the buffer that dX is then written into."""
    n, c, h, w = shape
    ph, pw = h // 2, w // 2
    pshape = (n, c, ph, pw)
    if inplace:
        # x = ReLU(a 1x1 convolution of one channel): exact products and
        # sums of one term.
        xin = values((n, 1, h, w), special)
        wc = rng.choice(np.array([1, 0.5, 2, -1], dtype=f32), size=(c, 1, 1, 1))
        with np.errstate(invalid="ignore"):
            pre = (xin * wc[:, 0, 0, 0].reshape(1, c, 1, 1)).astype(f32)
            xr = np.where(np.isnan(pre) | (pre > 0), pre, f32(0)).astype(f32)
        inputs = [xin, wc]
    else:
        xr = values(shape, special)
        inputs = [xr]
    taps = [xr[:, :, r:2 * ph:2, s:2 * pw:2] for r, s in TAPS]
    with np.errstate(invalid="ignore"):
        pooled = np.max(np.stack(taps), axis=0).astype(f32)
    if special:
        flat = pooled.reshape(-1)
        flat[rng.choice(flat.size, size=max(1, flat.size // 20))] = np.nan
    dy = values(pshape, special)
    want = np.zeros(shape, dtype=f32)
    for (r, s), o in zip(TAPS, route_ref(taps, pooled, dy, relu)):
        want[:, :, r:2 * ph:2, s:2 * pw:2] = o
    if inplace:
        assert h % 2 == 0 and w % 2 == 0  # every element is a tap
    t, tp = ty(shape), ty(pshape)
    idm = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    sc = "affine_map<(d0, d1, d2, d3) -> ()>"
    iters = ", ".join(['"parallel"'] * 4)
    if inplace:
        ti, tw = ty((n, 1, h, w)), ty((c, 1, 1, 1))
        args = f"%in: {ti}, %w: {tw}"
        head = f"""%e = tensor.empty() : {t}
  %z = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %c = linalg.conv_2d_nchw_fchw {{strides = dense<1> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins(%in, %w : {ti}, {tw}) outs(%z : {t}) -> {t}
  %x = linalg.generic {{indexing_maps = [{idm}, {idm}], iterator_types = [{iters}]}}
      ins(%c : {t}) outs(%e : {t}) {{
    ^bb0(%v: f32, %o: f32):
      %r = arith.maximumf %v, %zero : f32
      linalg.yield %r : f32
  }} -> {t}"""
        src_x, dst = "%x", "%e"
    else:
        head = f"""%e = tensor.empty() : {t}
  %init = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}"""
        args = f"%in: {t}"
        src_x, dst = "%in", "%init"
    slices, outs, inserts = [], [], []
    prev = dst
    for k, (r, s) in enumerate(TAPS):
        at = f"[0, 0, {r}, {s}] [{n}, {c}, {ph}, {pw}] [1, 1, 2, 2]"
        slices.append(f"%x{k} = tensor.extract_slice {src_x}{at} : {t} to {tp}")
        outs.append(f"%d{k} = tensor.extract_slice {dst}{at} : {t} to {tp}")
        inserts.append(f"%i{k} = tensor.insert_slice %g#{k} into {prev}{at} "
                       f": {tp} into {t}")
        prev = f"%i{k}"
    nl = "\n  "
    # In place, dX is a buffer of the function's own (a step reads it
    # again): returned times %one, an argument that is 1.
    tail = f"return {prev} : {t}"
    if inplace:
        tail = f"""%f = tensor.empty() : {t}
  %y = linalg.generic {{indexing_maps = [{idm}, {sc}, {idm}],
      iterator_types = [{iters}]}}
      ins({prev}, %one : {t}, tensor<f32>) outs(%f : {t}) {{
    ^bb0(%v: f32, %s: f32, %o: f32):
      %r = arith.mulf %v, %s : f32
      linalg.yield %r : f32
  }} -> {t}
  return %y : {t}"""
    src = f"""
func.func @main({args}, %pooled: {tp}, %dy: {tp}, %one: tensor<f32>) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  {head}
  {nl.join(slices)}
  {nl.join(outs)}
  %g:4 = linalg.generic {{indexing_maps = [{', '.join([idm] * 10)}],
      iterator_types = [{iters}]}}
      ins(%x0, %x1, %x2, %x3, %pooled, %dy : {tp}, {tp}, {tp}, {tp}, {tp}, {tp})
      outs(%d0, %d1, %d2, %d3 : {tp}, {tp}, {tp}, {tp}) {{
    ^bb0(%t0: f32, %t1: f32, %t2: f32, %t3: f32, %m: f32, %g: f32,
         %u0: f32, %u1: f32, %u2: f32, %u3: f32):
      {route_body(relu)}
      linalg.yield %r0, %r1, %r2, %r3 : f32, f32, f32, f32
  }} -> ({tp}, {tp}, {tp}, {tp})
  {nl.join(inserts)}
  {tail}
}}"""
    check(f"routing {shape} relu={relu} inplace={inplace} special={special}",
          src, inputs + [pooled, dy, np.array(1, dtype=f32)], [want])


def update(m, k, special=False):
    """Two outputs of an update: w - lr·gᵀ and v + gᵀ, with g read
    transposed (a gather) and lr a 0-d tensor."""
    w, v = values((m, k), special), values((m, k), special)
    g = values((k, m), special)
    lr = np.array(0.375, dtype=f32)
    with np.errstate(all="ignore"):
        want_w = (w - (g.T * lr).astype(f32)).astype(f32)
        want_v = (v + g.T).astype(f32)
    t, tg = ty((m, k)), ty((k, m))
    idm = "affine_map<(d0, d1) -> (d0, d1)>"
    tr = "affine_map<(d0, d1) -> (d1, d0)>"
    sc = "affine_map<(d0, d1) -> ()>"
    src = f"""
func.func @main(%w: {t}, %v: {t}, %g: {tg}, %lr: tensor<f32>) -> ({t}, {t}) {{
  %e = tensor.empty() : {t}
  %f = tensor.empty() : {t}
  %r:2 = linalg.generic {{indexing_maps = [{idm}, {idm}, {tr}, {sc}, {idm}, {idm}],
      iterator_types = ["parallel", "parallel"]}}
      ins(%w, %v, %g, %lr : {t}, {t}, {tg}, tensor<f32>) outs(%e, %f : {t}, {t}) {{
    ^bb0(%a: f32, %b: f32, %c: f32, %l: f32, %o: f32, %p: f32):
      %s = arith.mulf %c, %l : f32
      %x = arith.subf %a, %s : f32
      %y = arith.addf %b, %c : f32
      linalg.yield %x, %y : f32, f32
  }} -> ({t}, {t})
  return %r#0, %r#1 : {t}, {t}
}}"""
    check(f"update {m}x{k} special={special}", src, [w, v, g, lr],
          [want_w, want_v])


def lone_tap(rows, cols, start, special=False, tight=False):
    """One output: 2·x[:, start::2] + y, the strided view without its
    partner; with `tight`, its last element is the last of x."""
    x = values((rows, 2 * cols + start - tight), special)
    y = values((rows, cols), special)
    with np.errstate(all="ignore"):
        want = ((x[:, start::2][:, :cols] * f32(2)).astype(f32) + y).astype(f32)
    t, tx = ty((rows, cols)), ty(x.shape)
    idm = "affine_map<(d0, d1) -> (d0, d1)>"
    src = f"""
func.func @main(%x: {tx}, %y: {t}) -> {t} {{
  %two = arith.constant 2.0 : f32
  %s = tensor.extract_slice %x[0, {start}] [{rows}, {cols}] [1, 2] : {tx} to {t}
  %e = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [{idm}, {idm}, {idm}],
      iterator_types = ["parallel", "parallel"]}}
      ins(%s, %y : {t}, {t}) outs(%e : {t}) {{
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.mulf %a, %two : f32
      %z = arith.addf %d, %b : f32
      linalg.yield %z : f32
  }} -> {t}
  return %r : {t}
}}"""
    check(f"lone tap {rows}x{cols} from {start} special={special}", src,
          [x, y], [want])


def row_views(n, rows, cols, special=False):
    """Two outputs of rows of `cols` at most half a vector, packed two to a
    vector: a = x·s and b += x + s, x a view of the first `cols` of wider
    rows, s one value per row (a broadcast along the row that changes from
    row to row), b read and written in the first `cols` of wider rows."""
    x = values((n, rows, cols + 3), special)
    s = values((n, rows), special)
    b0 = values((n, rows, cols + 2))
    with np.errstate(all="ignore"):
        a = (x[:, :, :cols] * s[:, :, None]).astype(f32)
        b = b0.copy()
        b[:, :, :cols] = ((x[:, :, :cols] + s[:, :, None]).astype(f32) +
                          b0[:, :, :cols]).astype(f32)
    t, tx, tb, ts = ty((n, rows, cols)), ty(x.shape), ty(b0.shape), ty(s.shape)
    idm = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
    row = "affine_map<(d0, d1, d2) -> (d0, d1)>"
    src = f"""
func.func @main(%x: {tx}, %s: {ts}, %b0: {tb}) -> ({t}, {tb}) {{
  %xs = tensor.extract_slice %x[0, 0, 0] [{n}, {rows}, {cols}] [1, 1, 1] : {tx} to {t}
  %bs = tensor.extract_slice %b0[0, 0, 0] [{n}, {rows}, {cols}] [1, 1, 1] : {tb} to {t}
  %e = tensor.empty() : {t}
  %r:2 = linalg.generic {{indexing_maps = [{idm}, {row}, {idm}, {idm}],
      iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%xs, %s : {t}, {ts}) outs(%e, %bs : {t}, {t}) {{
    ^bb0(%v: f32, %w: f32, %o: f32, %p: f32):
      %m = arith.mulf %v, %w : f32
      %q0 = arith.addf %v, %w : f32
      %q = arith.addf %q0, %p : f32
      linalg.yield %m, %q : f32, f32
  }} -> ({t}, {t})
  %b = tensor.insert_slice %r#1 into %b0[0, 0, 0] [{n}, {rows}, {cols}] [1, 1, 1] : {t} into {tb}
  return %r#0, %b : {t}, {tb}
}}"""
    check(f"row views {n}x{rows}x{cols} special={special}", src, [x, s, b0], [a, b])


for shape in ((2, 3, 14, 14), (2, 3, 28, 28), (1, 2, 40, 40), (1, 1, 2, 2),
              (3, 2, 8, 66)):
    routing(shape)
routing((2, 2, 9, 9), special=True)
routing((1, 3, 15, 41), relu=False, special=True)
routing((2, 4, 28, 28), special=True)
routing((2, 3, 14, 14), inplace=True)
routing((1, 2, 28, 40), inplace=True, special=True)
update(64, 40)
update(5, 3, special=True)
update(3, 33, special=True)
lone_tap(4, 16, 0)
lone_tap(3, 7, 1, special=True)
lone_tap(5, 33, 0, special=True)
lone_tap(3, 16, 0, tight=True)
lone_tap(2, 21, 1, special=True, tight=True)
row_views(2, 5, 7)
row_views(2, 5, 3, special=True)
row_views(1, 4, 3, special=True)
row_views(3, 1, 8)

print(f"strided kernel cases: {cases}, mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: strided kernel cases: {{[1-9][0-9]*}}, mismatches: 0
