# RUN: %python %s tq-run | FileCheck %s
# The f32 kernels of tq-cpu-float-kernels (linalg.matmul, batch_matmul,
# conv_2d_nchw_fchw, conv_2d_nhwc_hwcf of few taps, depthwise
# conv_2d_ngchw_gfchw, pooling_nchw_max and
# pooling_nchw_sum on f32, a convolution with the max pooling after it, the
# NHWC to NCHW elementwise generic, elementwise generics on their own,
# reductions over a row and over the first dim)
# compiled by tq-to-cpu and run on every SIMD path,
# bit for bit against numpy summing each output in the op's order: on data
# whose products are exact (see data()), and on full-precision data with
# fused multiply-adds on the x86 targets and a multiply then an add on the
# generic one, each against its own reference. Shapes that are not
# multiples of the micro-tile (rows past 6, a masked last panel), a nonzero
# accumulator, strides, dilations, 1x1 convolutions (the image read in
# place), output images smaller than a vector (weight gradients, the
# filter a transpose read where it is), pooling rows narrower than a
# vector, ±0 in max pooling, NaN and ±Inf, ±2^63 (products of 2^126),
# 2 threads.
# NaN payloads are not compared: any NaN matches any NaN.
import sys

import numpy as np

from tq.cpu import Runner, bits_differ, host_targets, report_targets

cpu = Runner(sys.argv[1])
TARGETS = host_targets(sys.argv[1])
report_targets(TARGETS)
rng = np.random.default_rng(5)
failures = cases = 0


def ty(shape):
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def data(shape, special=False):
    """Multiples of 1/64 below 1 in magnitude, and with `special` some NaN,
    ±Inf and ±2^63: every product of two is exact and finite, so the x86 kernels'
    fused multiply-adds and the generic target's multiply-then-add give the
    same bits as the reference (sums still round, in order)."""
    x = (np.clip(np.round(rng.standard_normal(shape) * 24), -63, 63) / 64).astype(np.float32)
    if special:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 16), replace=False)
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 2.0**63, -2.0**63],
                                          dtype=np.float32), size=picks.size)
    return x


def check(name, src, inputs, want, want_fused=None):
    """`want_fused`, if given, is what the x86 targets (fused multiply-adds)
    must give; the generic target must give `want`."""
    global failures, cases
    for target in TARGETS:
        for threads in (1, 2):
            got, = cpu.run(src, inputs, target=target, threads=threads)
            w = want if want_fused is None or target == "generic" else want_fused
            cases += 1
            # Same bits, NaN payloads aside (which NaN an add returns
            # depends on the operand order the hardware sees).
            differ = bits_differ(got, w)
            if differ.any():
                failures += 1
                bad = np.flatnonzero(differ)
                print(f"MISMATCH {name} {target} threads={threads}: "
                      f"{bad.size} elements, first at {bad[0]}: "
                      f"{got.reshape(-1)[bad[0]]} vs {w.reshape(-1)[bad[0]]}")


def madd(acc, x, y, fused):
    """acc + x·y in f32: a multiply, then an add; with `fused`, one rounding
    of the exact value (the f64 product is exact; its f64 sum, rounded to
    f32, is the fused result for these data)."""
    if not fused:
        return (acc + x * y).astype(np.float32)
    f64 = np.float64
    return (acc.astype(f64) + x.astype(f64) * y.astype(f64)).astype(np.float32)


def ref_matmul(a, b, c, fused=False):
    """c + a @ b, each output summed in increasing k."""
    out = c.copy()
    with np.errstate(all="ignore"):
        for k in range(a.shape[-1]):
            out = madd(out, a[..., :, k:k + 1], b[..., k:k + 1, :], fused)
    return out


def full(shape):
    """Standard normal f32 values: products that round."""
    return rng.standard_normal(shape).astype(np.float32)


def matmul(m, n, k, batch=(), special=False, precise=False):
    """With `precise`, full-precision data: the x86 targets' sums of fused
    multiply-adds differ from the generic target's, each as its reference."""
    gen = full if precise else (lambda shape: data(shape, special))
    a = gen((*batch, m, k))
    b = gen((*batch, k, n))
    c = gen((*batch, m, n))
    op = "linalg.batch_matmul" if batch else "linalg.matmul"
    ta, tb, tc = ty(a.shape), ty(b.shape), ty(c.shape)
    src = f"""
func.func @main(%a: {ta}, %b: {tb}, %c: {tc}) -> {tc} {{
  %r = {op} ins(%a, %b : {ta}, {tb}) outs(%c : {tc}) -> {tc}
  return %r : {tc}
}}"""
    check(f"{op} {batch} {m}x{n}x{k} precise={precise}", src, [a, b, c],
          ref_matmul(a, b, c), ref_matmul(a, b, c, fused=True) if precise else None)


def ref_conv(x, w, bias, stride, dilation, fused=False, init=None, order="crs"):
    """From `init` (N, F, P, Q) if given, else the bias broadcast; the taps
    summed in (c, r, s) order, or (r, s, c) with order="rsc" (NHWC)."""
    n, c, h, wd = x.shape
    f, _, r, s = w.shape
    p = (h - dilation[0] * (r - 1) - 1) // stride[0] + 1
    q = (wd - dilation[1] * (s - 1) - 1) // stride[1] + 1
    out = np.broadcast_to(bias[None, :, None, None], (n, f, p, q)).astype(np.float32)
    if init is not None:
        out = init.copy()
    taps = [(ci, ri, si) for ci in range(c) for ri in range(r) for si in range(s)]
    if order == "rsc":
        taps.sort(key=lambda t: (t[1], t[2], t[0]))
    with np.errstate(all="ignore"):
        for ci, ri, si in taps:
            h0, w0 = ri * dilation[0], si * dilation[1]
            patch = x[:, ci, h0:h0 + stride[0] * (p - 1) + 1:stride[0],
                      w0:w0 + stride[1] * (q - 1) + 1:stride[1]]
            out = madd(out, w[None, :, ci, ri, si, None, None], patch[:, None], fused)
    return out


def conv(xshape, wshape, stride=(1, 1), dilation=(1, 1), special=False,
         precise=False):
    gen = full if precise else (lambda shape: data(shape, special))
    x = gen(xshape)
    w = gen(wshape)
    bias = gen((wshape[0],))
    want = ref_conv(x, w, bias, stride, dilation)
    fused = ref_conv(x, w, bias, stride, dilation, fused=True) if precise else None
    tx, tw, tb, ty_ = ty(x.shape), ty(w.shape), ty(bias.shape), ty(want.shape)
    src = f"""
#map = affine_map<(n, f, p, q) -> (f)>
#id = affine_map<(n, f, p, q) -> (n, f, p, q)>
func.func @main(%x: {tx}, %w: {tw}, %bias: {tb}) -> {ty_} {{
  %e = tensor.empty() : {ty_}
  %init = linalg.generic {{indexing_maps = [#map, #id],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%bias : {tb}) outs(%e : {ty_}) {{
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
  }} -> {ty_}
  %y = linalg.conv_2d_nchw_fchw {{strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>,
      dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>}}
      ins(%x, %w : {tx}, {tw}) outs(%init : {ty_}) -> {ty_}
  return %y : {ty_}
}}"""
    check(f"conv {xshape} {wshape} s={stride} d={dilation} precise={precise}", src,
          [x, w, bias], want, fused)


def nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def conv_nhwc(xshape, wshape, stride=(1, 1), dilation=(1, 1), pool=None,
              fill=True, special=False, precise=False, pads=None, pad_value=0.0):
    """linalg.conv_2d_nhwc_hwcf (the form tq-cpu-channels-last gives a first
    convolution; shapes given as NCHW and FCHW), from a fill of 0 or else
    from the output's values, then its bias and ReLU, then with `pool` =
    (k, stride) a max pooling (pooled image by image); each output summed in
    the op's (r, s, c) order. With `pads` = (top, left, bottom, right) the input is a
    tensor.pad with `pad_value` (padded image by image in the kernel)."""
    gen = full if precise else (lambda shape: data(shape, special))
    x, w, bias = gen(xshape), gen(wshape), gen((wshape[0],))
    xp = x
    if pads:
        t, l, bt, r = pads
        xp = np.pad(x, ((0, 0), (0, 0), (t, bt), (l, r)), constant_values=pad_value)
    n, f = xshape[0], wshape[0]
    p = (xp.shape[2] - dilation[0] * (wshape[2] - 1) - 1) // stride[0] + 1
    q = (xp.shape[3] - dilation[1] * (wshape[3] - 1) - 1) // stride[1] + 1
    init = None if fill else gen((n, f, p, q))

    def want(fused):
        with np.errstate(all="ignore"):
            y = ref_conv(xp, w, np.zeros(f, np.float32), stride, dilation, fused,
                         init=init, order="rsc")
            y = ref_max(y + bias.reshape(1, -1, 1, 1), np.float32(0))
            return nhwc(ref_max_pool(y, *pool) if pool else y)

    xt, wt = nhwc(x), np.ascontiguousarray(w.transpose(2, 3, 1, 0))
    yshape = (n, p, q, f)
    tx, tw, tb, ty_ = ty(xt.shape), ty(wt.shape), ty(bias.shape), ty(yshape)
    args, inputs = f"%x: {tx}, %w: {tw}, %bias: {tb}", [xt, wt, bias]
    if fill:
        init_ir = f"""%e = tensor.empty() : {ty_}
  %init = linalg.fill ins(%zero : f32) outs(%e : {ty_}) -> {ty_}"""
    else:
        args += f", %init: {ty_}"
        inputs.append(nhwc(init))
        init_ir = ""
    result, tr = "%r", ty_
    pad_ir, xin, txp = "", "%x", tx
    if pads:
        txp = ty(nhwc(xp).shape)
        pad_ir = f"""%pv = arith.constant {float(pad_value)!r} : f32
  %xp = tensor.pad %x low[0, {pads[0]}, {pads[1]}, 0] high[0, {pads[2]}, {pads[3]}, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pv : f32
  }} : {tx} to {txp}"""
        xin = "%xp"
    pool_ir = ""
    if pool:
        k, ps = pool
        pp, pq = (p - k) // ps + 1, (q - k) // ps + 1
        tr = ty((n, pp, pq, f))
        pool_ir = f"""%pe = tensor.empty() : {tr}
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : {tr}) -> {tr}
  %k = tensor.empty() : tensor<{k}x{k}xf32>
  %z = linalg.pooling_nhwc_max {{strides = dense<{ps}> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins(%r, %k : {ty_}, tensor<{k}x{k}xf32>) outs(%pf : {tr}) -> {tr}"""
        result = "%z"
    src = f"""
func.func @main({args}) -> {tr} {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  {init_ir}
  {pad_ir}
  %y = linalg.conv_2d_nhwc_hwcf {{strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>,
      dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>}}
      ins({xin}, %w : {txp}, {tw}) outs(%init : {ty_}) -> {ty_}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, p, q, f) -> (n, p, q, f)>,
      affine_map<(n, p, q, f) -> (f)>, affine_map<(n, p, q, f) -> (n, p, q, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%y, %bias : {ty_}, {tb}) outs(%y : {ty_}) {{
    ^bb0(%v: f32, %b: f32, %o: f32):
      %s = arith.addf %v, %b : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
  }} -> {ty_}
  {pool_ir}
  return {result} : {tr}
}}"""
    check(f"conv nhwc {xshape} {wshape} s={stride} d={dilation} pool={pool} "
          f"fill={fill} precise={precise} pads={pads}", src, inputs, want(False),
          want(True) if precise else None)


def transposed_filter_conv(xshape, dyshape, special=False, precise=False,
                           perm=(1, 0, 2, 3)):
    """conv(x, w) filled with 0, w a linalg.transpose of dY by `perm` (dY
    as (C, F, R, S) by default: tq-training-step's weight gradients)."""
    gen = full if precise else (lambda shape: data(shape, special))
    x = gen(xshape)
    dy = gen(dyshape)
    w = np.ascontiguousarray(dy.transpose(perm))
    zero = np.zeros(w.shape[0], np.float32)
    want = ref_conv(x, w, zero, (1, 1), (1, 1))
    fused = ref_conv(x, w, zero, (1, 1), (1, 1), fused=True) if precise else None
    tx, tdy, tw, ty_ = ty(x.shape), ty(dy.shape), ty(w.shape), ty(want.shape)
    src = f"""
func.func @main(%x: {tx}, %dy: {tdy}) -> {ty_} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {tw}
  %w = linalg.transpose ins(%dy : {tdy}) outs(%e : {tw}) permutation = [{", ".join(map(str, perm))}]
  %o = tensor.empty() : {ty_}
  %init = linalg.fill ins(%zero : f32) outs(%o : {ty_}) -> {ty_}
  %y = linalg.conv_2d_nchw_fchw {{strides = dense<1> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins(%x, %w : {tx}, {tw}) outs(%init : {ty_}) -> {ty_}
  return %y : {ty_}
}}"""
    check(f"conv {xshape} dY {dyshape} transposed {perm} precise={precise}", src, [x, dy],
          want, fused)


def ref_depthwise(x, w, bias, stride, dilation, fused=False):
    n, g, _, h, wd = x.shape
    r, s = w.shape[3], w.shape[4]
    p = (h - dilation[0] * (r - 1) - 1) // stride[0] + 1
    q = (wd - dilation[1] * (s - 1) - 1) // stride[1] + 1
    out = np.broadcast_to(bias[None, :, None, None, None], (n, g, 1, p, q)).astype(np.float32)
    with np.errstate(all="ignore"):
        for ri in range(r):
            for si in range(s):
                h0, w0 = ri * dilation[0], si * dilation[1]
                patch = x[:, :, :, h0:h0 + stride[0] * (p - 1) + 1:stride[0],
                          w0:w0 + stride[1] * (q - 1) + 1:stride[1]]
                out = madd(out, w[None, :, 0, 0, ri, si, None, None, None], patch, fused)
    return out


def depthwise(xshape, k, stride=(1, 1), dilation=(1, 1), special=False,
              precise=False, zero_fill=False):
    """The output starts from the bias; with `zero_fill`, from a zero
    linalg.fill, the bias added by a generic after the convolution (the
    form the channels-last kernel takes, with the add as its epilogue)."""
    n, g, h, wd = xshape
    gen = full if precise else (lambda shape: data(shape, special))
    x = gen((n, g, 1, h, wd))
    w = gen((g, 1, 1, k, k))
    bias = gen((g,))
    if zero_fill:
        zero, b5 = np.zeros(g, np.float32), bias[None, :, None, None, None]
        with np.errstate(all="ignore"):
            want = (ref_depthwise(x, w, zero, stride, dilation) + b5).astype(np.float32)
            fused = (ref_depthwise(x, w, zero, stride, dilation, fused=True) + b5).astype(
                np.float32) if precise else None
    else:
        want = ref_depthwise(x, w, bias, stride, dilation)
        fused = ref_depthwise(x, w, bias, stride, dilation, fused=True) if precise else None
    tx, tw, tb, ty_ = ty(x.shape), ty(w.shape), ty(bias.shape), ty(want.shape)
    if zero_fill:
        src = f"""
#map = affine_map<(n, g, f, p, q) -> (g)>
#id = affine_map<(n, g, f, p, q) -> (n, g, f, p, q)>
func.func @main(%x: {tx}, %w: {tw}, %bias: {tb}) -> {ty_} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {ty_}
  %init = linalg.fill ins(%zero : f32) outs(%e : {ty_}) -> {ty_}
  %y = linalg.conv_2d_ngchw_gfchw {{strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>,
      dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>}}
      ins(%x, %w : {tx}, {tw}) outs(%init : {ty_}) -> {ty_}
  %e2 = tensor.empty() : {ty_}
  %z = linalg.generic {{indexing_maps = [#id, #map, #id],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}}
      ins(%y, %bias : {ty_}, {tb}) outs(%e2 : {ty_}) {{
    ^bb0(%v: f32, %b: f32, %o: f32):
      %s = arith.addf %v, %b : f32
      linalg.yield %s : f32
  }} -> {ty_}
  return %z : {ty_}
}}"""
        check(f"depthwise {xshape} k={k} s={stride} d={dilation} precise={precise} zero fill",
              src, [x, w, bias], want, fused)
        return
    src = f"""
#map = affine_map<(n, g, f, p, q) -> (g)>
#id = affine_map<(n, g, f, p, q) -> (n, g, f, p, q)>
func.func @main(%x: {tx}, %w: {tw}, %bias: {tb}) -> {ty_} {{
  %e = tensor.empty() : {ty_}
  %init = linalg.generic {{indexing_maps = [#map, #id],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}}
      ins(%bias : {tb}) outs(%e : {ty_}) {{
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
  }} -> {ty_}
  %y = linalg.conv_2d_ngchw_gfchw {{strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>,
      dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>}}
      ins(%x, %w : {tx}, {tw}) outs(%init : {ty_}) -> {ty_}
  return %y : {ty_}
}}"""
    check(f"depthwise {xshape} k={k} s={stride} d={dilation} precise={precise}", src,
          [x, w, bias], want, fused)


def padded_depthwise(xshape, k, pads, stride=(1, 1), special=False, nhwc=False):
    """relu(x), zero-padded by pads = (top, left, bottom, right), a depthwise
    convolution (the kernel pads each plane into a scratch buffer instead of
    the padded tensor), then bias and ReLU. With `nhwc`, x is given as NHWC
    and transposed to NCHW first, as after a quantized convolution:
    tq-cpu-channels-last then runs every op in NHWC (the depthwise
    convolution as linalg.depthwise_conv_2d_nhwc_hwc, its filter a
    transpose of the argument) and transposes the output back."""
    n, g, h, wd = xshape
    x = data(xshape, special)
    w = data((g, 1, 1, k, k), special)
    bias = data((g,))
    t, l, bt, r = pads
    with np.errstate(all="ignore"):
        xr = np.where(x > 0, x, np.float32(0)).astype(np.float32)
        xr[np.isnan(x)] = np.nan
        xp = np.pad(xr, ((0, 0), (0, 0), (t, bt), (l, r)))[:, :, None]
        y = ref_depthwise(xp, w, np.zeros(g, np.float32), stride, (1, 1))[:, :, 0]
        want = (y + bias[None, :, None, None]).astype(np.float32)
        nan = np.isnan(want)
        want = np.where(want > 0, want, np.float32(0)).astype(np.float32)
        want[nan] = np.nan
    P, Q = want.shape[2], want.shape[3]
    tx, tw, tb = ty(x.shape), ty(w.shape), ty(bias.shape)
    tp = ty((n, g, h + t + bt, wd + l + r))
    tp5 = ty((n, g, 1, h + t + bt, wd + l + r))
    ty5, ty4 = ty((n, g, 1, P, Q)), ty((n, g, P, Q))
    src = f"""
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @main(%x: {tx}, %w: {tw}, %bias: {tb}) -> {ty4} {{
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : {tx}
  %r = linalg.generic {{indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins({{x_nchw}} : {tx}) outs(%e0 : {tx}) {{
    ^bb0(%v: f32, %o: f32):
      %m = arith.maximumf %v, %zero : f32
      linalg.yield %m : f32
  }} -> {tx}
  %p = tensor.pad %r low[0, 0, {t}, {l}] high[0, 0, {bt}, {r}] {{
    ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
      tensor.yield %zero : f32
  }} : {tx} to {tp}
  %p5 = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [{n}, {g}, 1, {h + t + bt}, {wd + l + r}] : {tp} into {tp5}
  %e = tensor.empty() : {ty5}
  %f = linalg.fill ins(%zero : f32) outs(%e : {ty5}) -> {ty5}
  %y = linalg.conv_2d_ngchw_gfchw {{strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins(%p5, %w : {tp5}, {tw}) outs(%f : {ty5}) -> {ty5}
  %y4 = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : {ty5} into {ty4}
  %e4 = tensor.empty() : {ty4}
  %out = linalg.generic {{indexing_maps = [#id, #ch, #id],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%y4, %bias : {ty4}, {tb}) outs(%e4 : {ty4}) {{
    ^bb0(%v: f32, %b: f32, %o: f32):
      %s = arith.addf %v, %b : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
  }} -> {ty4}
  return %out : {ty4}
}}"""
    if nhwc:
        tn = ty((n, h, wd, g))
        src = src.replace(f"%x: {tx}", f"%xn: {tn}").replace(
            "{x_nchw}", "%x").replace(
            "%e0 = tensor.empty()",
            f"%et = tensor.empty() : {tx}\n  %x = linalg.transpose ins(%xn : {tn}) "
            f"outs(%et : {tx}) permutation = [0, 3, 1, 2]\n  %e0 = tensor.empty()", 1)
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    else:
        src = src.replace("{x_nchw}", "%x")
    check(f"padded depthwise {xshape} k={k} pads={pads} s={stride} nhwc={nhwc}", src,
          [x, w, bias], want)


def ref_max(a, b):
    """arith.maximumf: NaN if either is NaN, and -0 < +0."""
    with np.errstate(all="ignore"):
        r = np.where(a > b, a, b)
    zeros = (a == 0) & (b == 0)
    r = np.where(zeros, np.where(np.signbit(a) & np.signbit(b), np.float32(-0.0),
                                 np.float32(0.0)), r)
    return np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), r).astype(np.float32)


def pool(kind, xshape, k, stride, dilation=(1, 1), fill=True, special=False,
         nhwc=False):
    """With `nhwc`, x is given as NHWC and transposed to NCHW first:
    tq-cpu-channels-last then pools in NHWC (vectors of channels) and
    transposes the output."""
    x = data(xshape, special)
    if special:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(2, flat.size // 8), replace=False)
        flat[picks] = rng.choice(np.array([0.0, -0.0], dtype=np.float32), size=picks.size)
    n, c, h, wd = xshape
    p = (h - dilation[0] * (k[0] - 1) - 1) // stride[0] + 1
    q = (wd - dilation[1] * (k[1] - 1) - 1) // stride[1] + 1
    init = np.float32(-np.inf if kind == "max" else 0.0)
    acc = np.full((n, c, p, q), init, np.float32) if fill else data((n, c, p, q))
    want = acc.copy()
    with np.errstate(all="ignore"):
        for ri in range(k[0]):
            for si in range(k[1]):
                h0, w0 = ri * dilation[0], si * dilation[1]
                patch = x[:, :, h0:h0 + stride[0] * (p - 1) + 1:stride[0],
                          w0:w0 + stride[1] * (q - 1) + 1:stride[1]]
                want = ref_max(want, patch) if kind == "max" else want + patch
    tx, ty_, tk = ty(x.shape), ty(want.shape), ty(k)
    if fill:
        args, init_ir = f"%x: {tx}", f"""%e = tensor.empty() : {ty_}
  %c = arith.constant {float(init)!r} : f32
  %init = linalg.fill ins(%c : f32) outs(%e : {ty_}) -> {ty_}"""
        init_ir = init_ir.replace("-inf", "0xFF800000")
        inputs = [x]
    else:
        args, init_ir, inputs = f"%x: {tx}, %init: {ty_}", "", [x, acc]
    src = f"""
func.func @main({args}) -> {ty_} {{
  {init_ir}
  %k = tensor.empty() : {tk}
  %y = linalg.pooling_nchw_{kind} {{strides = dense<[{stride[0]}, {stride[1]}]> : tensor<2xi64>,
      dilations = dense<[{dilation[0]}, {dilation[1]}]> : tensor<2xi64>}}
      ins(%x, %k : {tx}, {tk}) outs(%init : {ty_}) -> {ty_}
  return %y : {ty_}
}}"""
    if nhwc:
        tn = ty((n, h, wd, c))
        src = src.replace(f"@main(%x: {tx}", f"@main(%xn: {tn}").replace(
            "  %k = tensor.empty()",
            f"  %et = tensor.empty() : {tx}\n  %x = linalg.transpose ins(%xn : {tn}) "
            f"outs(%et : {tx}) permutation = [0, 3, 1, 2]\n  %k = tensor.empty()", 1)
        inputs = [np.ascontiguousarray(x.transpose(0, 2, 3, 1))] + inputs[1:]
    check(f"pool {kind} {xshape} k={k} s={stride} d={dilation} fill={fill} nhwc={nhwc}",
          src, inputs, want)


def ref_max_pool(y, k, stride):
    """A k x k max pooling of NCHW `y` with `stride`, from -Inf, the taps in
    (kh, kw) order (ref_max)."""
    n, c, h, wd = y.shape
    p, q = (h - k) // stride + 1, (wd - k) // stride + 1
    want = np.full((n, c, p, q), -np.inf, np.float32)
    for ri in range(k):
        for si in range(k):
            want = ref_max(want, y[:, :, ri:ri + stride * (p - 1) + 1:stride,
                                   si:si + stride * (q - 1) + 1:stride])
    return want


def conv_pool(xshape, wshape, k, stride, relu=True, special=False):
    """A convolution (filled with 0), its bias and ReLU, then a max pooling
    (filled with -inf): the convolution pools each image as it has it."""
    x, w = data(xshape, special), data(wshape, special)
    bias = data((wshape[0],), special)
    with np.errstate(all="ignore"):
        y = ref_conv(x, w, np.zeros(wshape[0], np.float32), (1, 1), (1, 1))
        if relu:
            y = ref_max(y + bias.reshape(1, -1, 1, 1), np.float32(0))
        want = ref_max_pool(y, k, stride)
    tx, tw, tb, ty_, tp = (ty(x.shape), ty(w.shape), ty(bias.shape), ty(y.shape),
                           ty(want.shape))
    epilogue = f"""%r = linalg.generic {{indexing_maps = [affine_map<(n, f, p, q) -> (n, f, p, q)>,
      affine_map<(n, f, p, q) -> (f)>, affine_map<(n, f, p, q) -> (n, f, p, q)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%y, %bias : {ty_}, {tb}) outs(%y : {ty_}) {{
    ^bb0(%v: f32, %b: f32, %o: f32):
      %s = arith.addf %v, %b : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
  }} -> {ty_}""" if relu else "%r = arith.addf %zero, %zero : f32"
    pooled = "%r" if relu else "%y"
    src = f"""
func.func @main(%x: {tx}, %w: {tw}, %bias: {tb}) -> {tp} {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : {ty_}
  %f = linalg.fill ins(%zero : f32) outs(%e : {ty_}) -> {ty_}
  %y = linalg.conv_2d_nchw_fchw {{strides = dense<1> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins(%x, %w : {tx}, {tw}) outs(%f : {ty_}) -> {ty_}
  {epilogue}
  %pe = tensor.empty() : {tp}
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : {tp}) -> {tp}
  %k = tensor.empty() : tensor<{k}x{k}xf32>
  %z = linalg.pooling_nchw_max {{strides = dense<{stride}> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins({pooled}, %k : {ty_}, tensor<{k}x{k}xf32>) outs(%pf : {tp}) -> {tp}
  return %z : {tp}
}}"""
    check(f"conv {xshape} {wshape} + pool {k}/{stride} relu={relu} special={special}",
          src, [x, w, bias], want)


def ref_min(a, b):
    """arith.minimumf: NaN if either is NaN, and -0 < +0."""
    return -ref_max(-a, -b)


def relu_pool(xshape, k, stride, clip=False):
    """A ReLU (maximumf(0, x), then a clip at 6 with `clip`) and a max
    pooling of its output on their own: the pooling is marked
    tq.nonnegative_input and combines as `x > acc ? x : acc`, NaN kept.
    The input holds ±0, NaN, ±Inf and values below -0 that the ReLU makes
    +0; the ReLU's output holds no -0."""
    x = data(xshape, special=True)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=max(2, flat.size // 6), replace=False)
    flat[picks] = rng.choice(np.array([0.0, -0.0], dtype=np.float32), size=picks.size)
    with np.errstate(all="ignore"):
        r = ref_max(np.float32(0), x)
        if clip:
            r = ref_min(r, np.float32(6))
        want = ref_max_pool(r, k, stride)
    tx, tp = ty(x.shape), ty(want.shape)
    clip_ir = "%c = arith.minimumf %m, %six : f32" if clip else "%c = arith.addf %m, %zero : f32"
    src = f"""
func.func @main(%x: {tx}) -> {tp} {{
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : {tx}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
      affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%x : {tx}) outs(%e : {tx}) {{
    ^bb0(%v: f32, %o: f32):
      %m = arith.maximumf %zero, %v : f32
      {clip_ir}
      linalg.yield %c : f32
  }} -> {tx}
  %pe = tensor.empty() : {tp}
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : {tp}) -> {tp}
  %k = tensor.empty() : tensor<{k}x{k}xf32>
  %z = linalg.pooling_nchw_max {{strides = dense<{stride}> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}
      ins(%r, %k : {tx}, tensor<{k}x{k}xf32>) outs(%pf : {tp}) -> {tp}
  return %z : {tp}
}}"""
    if not clip:
        # maximumf(m, +0) + 0 would turn a -0 into +0 anyway; the body
        # keeps the ReLU's value: yield %m.
        src = src.replace("linalg.yield %c : f32", "linalg.yield %m : f32")
    check(f"relu{'6' if clip else ''} + pool {xshape} {k}/{stride}", src, [x], want)


# Elementwise ops right after a kernel, rewriting its output in place, are
# applied to each vector before it is stored (the epilogue). Each body is
# given as MLIR and as numpy on f32.
EPILOGUES = {
    # bias (one per row of the kernel's output), then ReLU
    "bias_relu": ("""
      %s = arith.addf %o, %b : f32
      %r = arith.maximumf %s, %zero : f32""",
                  lambda o, b, res: ref_max(o + b, np.float32(0))),
    # residual add, then clip to [-1, 2] (ReLU6-like)
    "residual_clip": ("""
      %s = arith.addf %o, %res : f32
      %l = arith.maximumf %s, %m1 : f32
      %r = arith.minimumf %l, %two : f32""",
                      lambda o, b, res: ref_min(ref_max(o + res, np.float32(-1)),
                                                np.float32(2))),
    # hard swish on (o + b) * res, with a compare and select
    "swish_select": ("""
      %t = arith.mulf %o, %res : f32
      %u = arith.addf %t, %b : f32
      %v = arith.addf %u, %three : f32
      %c = arith.cmpf olt, %v, %zero : f32
      %w = arith.select %c, %zero, %v : f32
      %x = arith.mulf %u, %w : f32
      %r = arith.divf %x, %six : f32""",
                     lambda o, b, res: swish_ref(o, b, res)),
}


# The constants the bodies of EPILOGUES use.
CONSTANTS = """  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1.0 : f32
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %six = arith.constant 6.0 : f32"""


def swish_ref(o, b, res):
    u = o * res + b
    v = u + np.float32(3)
    w = np.where(v < 0, np.float32(0), v).astype(np.float32)
    return (u * w / np.float32(6)).astype(np.float32)


def fused(kernel, body, special=False):
    """A kernel (conv, matmul, depthwise, pool) producing %y, then a generic
    rewriting %y with `body`, given a per-row %b (dim 1, or 0 for a 2-D
    output) and a same-shape %res."""
    with np.errstate(all="ignore"):
        unit = """{{strides = dense<1> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}"""
        init, args = "%zero", "%a0, %a1"
        if kernel == "conv":
            x, w = data((2, 3, 9, 9), special), data((6, 3, 3, 3), special)
            y0 = ref_conv(x, w, np.zeros(6, np.float32), (1, 1), (1, 1))
            ins, name = [x, w], "linalg.conv_2d_nchw_fchw " + unit
        elif kernel == "matmul":
            ins = [data((13, 7), special), data((7, 21), special)]
            y0 = ref_matmul(*ins, np.zeros((13, 21), np.float32))
            name = "linalg.matmul"
        elif kernel.startswith("depthwise"):
            # depthwise-small: rows of 4 outputs, 20 channels (channels-last).
            g, h, wd = (20, 6, 6) if kernel == "depthwise-small" else (4, 10, 13)
            x, w = data((1, g, 1, h, wd), special), data((g, 1, 1, 3, 3), special)
            y0 = ref_depthwise(x, w, np.zeros(g, np.float32), (1, 1), (1, 1))
            ins, name = [x, w], "linalg.conv_2d_ngchw_gfchw " + unit
        else:
            x = data((2, 3, 12, 11), special)
            y0 = np.full((2, 3, 6, 5), -np.inf, np.float32)
            for ri in range(2):
                for si in range(2):
                    y0 = ref_max(y0, x[:, :, ri:ri + 11:2, si:si + 9:2])
            ins, init, args = [x], "%ninf", "%a0, %k"
            name = """linalg.pooling_nchw_max {{strides = dense<2> : tensor<2xi64>,
      dilations = dense<1> : tensor<2xi64>}}"""
        tys = [ty(a.shape) for a in ins] + (["tensor<2x2xf32>"] if kernel == "pool" else [])
        t = ty(y0.shape)
        op = f"""%e = tensor.empty() : {t}
  %ninf = arith.constant 0xFF800000 : f32
  %k = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins({init} : f32) outs(%e : {t}) -> {t}
  %y = {name.format()}
      ins({args} : {", ".join(tys)}) outs(%f : {t}) -> {t}"""
        tys = tys[:len(ins)]
        shape = y0.shape
        rowdim = 1 if len(shape) > 2 else 0
        bias = data((shape[rowdim],), special)
        res = data(shape, special)
        ir_body, ref = EPILOGUES[body]
        dims = ", ".join(f"d{i}" for i in range(len(shape)))
        idm = f"affine_map<({dims}) -> ({dims})>"
        rowm = f"affine_map<({dims}) -> (d{rowdim})>"
        bshape = [1] * len(shape)
        bshape[rowdim] = shape[rowdim]
        want = ref(y0, bias.reshape(bshape), res)
    names = [f"%a{i}: {t}" for i, t in enumerate(tys)]
    ty_ = ty(shape)
    iters = ", ".join(['"parallel"'] * len(shape))
    src = f"""
func.func @main({", ".join(names)}, %bias: {ty(bias.shape)}, %resid: {ty_}) -> {ty_} {{
{CONSTANTS}
  {op}
  %z = linalg.generic {{indexing_maps = [{idm}, {rowm}, {idm}, {idm}],
      iterator_types = [{iters}]}}
      ins(%y, %bias, %resid : {ty_}, {ty(bias.shape)}, {ty_}) outs(%y : {ty_}) {{
    ^bb0(%o: f32, %b: f32, %res: f32, %out: f32):{ir_body}
      linalg.yield %r : f32
  }} -> {ty_}
  return %z : {ty_}
}}"""
    check(f"{kernel} + {body} special={special}", src, [*ins, bias, res], want)


def transposed(xshape, body, special=False, residual_first=False):
    """The layout transpose after tq.conv2d: an NHWC input read as NCHW by
    a generic that applies `body` with a per-channel %b and an NCHW %res
    (tq-cpu-float-kernels' L x L register transpose); with
    `residual_first`, %res is the generic's first input and the NHWC one
    its last (as fusing a residual add after the bias makes it)."""
    n, h, w, c = xshape
    x = data(xshape, special)
    bias, res = data((c,), special), data((n, c, h, w), special)
    ir_body, ref = EPILOGUES[body]
    with np.errstate(all="ignore"):
        want = ref(x.transpose(0, 3, 1, 2), bias.reshape(1, c, 1, 1), res)
    d = "(d0, d1, d2, d3)"
    tx, to, tb = ty(xshape), ty((n, c, h, w)), ty((c,))
    nhwc, chan, ident = (f"affine_map<{d} -> (d0, d2, d3, d1)>",
                         f"affine_map<{d} -> (d1)>", f"affine_map<{d} -> {d}>")
    ins = [("%in", tx, nhwc, "%o"), ("%bias", tb, chan, "%b"), ("%resid", to, ident, "%res")]
    if residual_first:
        ins.reverse()
    maps = ", ".join(m for _, _, m, _ in ins)
    src = f"""
func.func @main(%in: {tx}, %bias: {tb}, %resid: {to}) -> {to} {{
{CONSTANTS}
  %e = tensor.empty() : {to}
  %z = linalg.generic {{indexing_maps = [{maps}, {ident}],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins({", ".join(v for v, _, _, _ in ins)} : {", ".join(t for _, t, _, _ in ins)})
      outs(%e : {to}) {{
    ^bb0({", ".join(a + ": f32" for _, _, _, a in ins)}, %out: f32):{ir_body}
      linalg.yield %r : f32
  }} -> {to}
  return %z : {to}
}}"""
    check(f"nhwc->nchw {xshape} + {body} special={special} residual_first={residual_first}",
          src, [x, bias, res], want)


def elementwise(shape, bias_dim, body, special=False, accumulate=False):
    """A generic on its own (tq-cpu-float-kernels' vector loops): `body`
    with %o the input, %b indexed by dim `bias_dim` alone, and a same-shape
    %res; with `accumulate`, %res is also the generic's init, and the
    result adds the body's value to it (the old value read from the
    target)."""
    x, res = data(shape, special), data(shape, special)
    bias = data((shape[bias_dim],), special)
    bshape = [1] * len(shape)
    bshape[bias_dim] = shape[bias_dim]
    ir_body, ref = EPILOGUES[body]
    with np.errstate(all="ignore"):
        want = ref(x, bias.reshape(bshape), res)
        if accumulate:
            want = want + res
    dims = ", ".join(f"d{i}" for i in range(len(shape)))
    idm = f"affine_map<({dims}) -> ({dims})>"
    bm = f"affine_map<({dims}) -> (d{bias_dim})>"
    t, tb = ty(shape), ty(bias.shape)
    iters = ", ".join(['"parallel"'] * len(shape))
    init = "%resid" if accumulate else "%e"
    result = "%q = arith.addf %r, %out : f32" if accumulate else \
        "%q = arith.addf %r, %zero : f32"
    src = f"""
func.func @main(%in: {t}, %bias: {tb}, %resid: {t}) -> {t} {{
{CONSTANTS}
  %e = tensor.empty() : {t}
  %z = linalg.generic {{indexing_maps = [{idm}, {bm}, {idm}, {idm}],
      iterator_types = [{iters}]}}
      ins(%in, %bias, %resid : {t}, {tb}, {t}) outs({init} : {t}) {{
    ^bb0(%o: f32, %b: f32, %res: f32, %out: f32):{ir_body}
      {result}
      linalg.yield %q : f32
  }} -> {t}
  return %z : {t}
}}"""
    if not accumulate:
        with np.errstate(all="ignore"):
            want = (want + np.float32(0)).astype(np.float32)
    check(f"elementwise {shape} bias on {bias_dim} + {body} "
          f"accumulate={accumulate} special={special}", src, [x, bias, res], want)


def row_reduction(shape, kind, special=False):
    """A reduction over the last dim into the leading ones, from an initial
    value: "sum" of (x - m)^2 with a per-row m (layer norm's variance),
    "max" (softmax's maximum, NaN and ±0 as arith.maximumf). The reference
    takes each row's elements in order."""
    x = data(shape, special)
    init = data(shape[:-1], special)
    m = data(shape[:-1])
    with np.errstate(all="ignore"):
        want = init.copy()
        for k in range(shape[-1]):
            if kind == "sum":
                d = (x[..., k] - m).astype(np.float32)
                want = (want + d * d).astype(np.float32)
            else:
                want = ref_max(want, x[..., k])
    rank = len(shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    rows = ", ".join(f"d{i}" for i in range(rank - 1))
    t, tr = ty(shape), ty(shape[:-1])
    iters = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
    body = """%d = arith.subf %v, %m : f32
      %s = arith.mulf %d, %d : f32
      %r = arith.addf %acc, %s : f32""" if kind == "sum" else \
        "%r = arith.maximumf %acc, %v : f32"
    src = f"""
func.func @main(%x: {t}, %init: {tr}, %mean: {tr}) -> {tr} {{
  %z = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>,
      affine_map<({dims}) -> ({rows})>, affine_map<({dims}) -> ({rows})>],
      iterator_types = [{iters}]}}
      ins(%x, %mean : {t}, {tr}) outs(%init : {tr}) {{
    ^bb0(%v: f32, %m: f32, %acc: f32):
      {body}
      linalg.yield %r : f32
  }} -> {tr}
  return %z : {tr}
}}"""
    check(f"row {kind} {shape} special={special}", src, [x, init, m], want)



def column_reduction(shape, kind, special=False):
    """A reduction over the first dim into the others, from an initial
    value: "sum" of x·s with a per-column s (a bias gradient's sum over the
    batch, scaled), "max" (NaN and ±0 as arith.maximumf). The reference
    takes each column's elements row by row, in order."""
    x = data(shape, special)
    init = data(shape[1:], special)
    sc = data(shape[1:])
    with np.errstate(all="ignore"):
        want = init.copy()
        for k in range(shape[0]):
            if kind == "sum":
                want = (want + (x[k] * sc).astype(np.float32)).astype(np.float32)
            else:
                want = ref_max(want, x[k])
    rank = len(shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    cols = ", ".join(f"d{i}" for i in range(1, rank))
    t, tc = ty(shape), ty(shape[1:])
    iters = ", ".join(['"reduction"'] + ['"parallel"'] * (rank - 1))
    body = """%p = arith.mulf %v, %s : f32
      %r = arith.addf %acc, %p : f32""" if kind == "sum" else \
        "%r = arith.maximumf %acc, %v : f32"
    src = f"""
func.func @main(%x: {t}, %init: {tc}, %scale: {tc}) -> {tc} {{
  %z = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>,
      affine_map<({dims}) -> ({cols})>, affine_map<({dims}) -> ({cols})>],
      iterator_types = [{iters}]}}
      ins(%x, %scale : {t}, {tc}) outs(%init : {tc}) {{
    ^bb0(%v: f32, %s: f32, %acc: f32):
      {body}
      linalg.yield %r : f32
  }} -> {tc}
  return %z : {tc}
}}"""
    check(f"column {kind} {shape} special={special}", src, [x, init, sc], want)


def middle_reduction(shape, reduced, kind, special=False):
    """A reduction over the `reduced` dims after the first into the first
    and the rest (an NHWC global pooling: the sums over each image's
    pixels), from an initial value: "sum" of x + b with b per column (a
    bias before the pooling), "max" (NaN and ±0 as arith.maximumf). The
    reference takes each image's pixels in order."""
    x = data(shape, special)
    cshape = shape[1 + reduced:]
    oshape = (shape[0],) + cshape
    init = data(oshape, special)
    bias = data(cshape)
    want = init.copy()
    pixels = x.reshape((shape[0], -1) + cshape)
    with np.errstate(all="ignore"):
        for k in range(pixels.shape[1]):
            if kind == "sum":
                want = (want + (pixels[:, k] + bias).astype(np.float32)).astype(np.float32)
            else:
                want = ref_max(want, pixels[:, k])
    rank = len(shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    kept = ["d0"] + [f"d{i}" for i in range(1 + reduced, rank)]
    cols = ", ".join(kept[1:])
    t, to, tc = ty(shape), ty(oshape), ty(cshape)
    iters = ", ".join(['"parallel"'] + ['"reduction"'] * reduced +
                      ['"parallel"'] * (rank - 1 - reduced))
    body = """%p = arith.addf %v, %b : f32
      %r = arith.addf %acc, %p : f32""" if kind == "sum" else \
        "%r = arith.maximumf %acc, %v : f32"
    src = f"""
func.func @main(%x: {t}, %init: {to}, %bias: {tc}) -> {to} {{
  %z = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>,
      affine_map<({dims}) -> ({cols})>, affine_map<({dims}) -> ({", ".join(kept)})>],
      iterator_types = [{iters}]}}
      ins(%x, %bias : {t}, {tc}) outs(%init : {to}) {{
    ^bb0(%v: f32, %b: f32, %acc: f32):
      {body}
      linalg.yield %r : f32
  }} -> {to}
  return %z : {to}
}}"""
    check(f"middle {kind} {shape} reduced={reduced} special={special}", src,
          [x, init, bias], want)


matmul(1, 1, 1)
matmul(6, 16, 8)
matmul(10, 40, 7)
matmul(13, 5, 33)
matmul(64, 64, 128)
matmul(7, 19, 9, special=True)
matmul(5, 24, 6, batch=(3,))
matmul(9, 10, 17, batch=(2,), special=True)
conv((2, 3, 8, 8), (4, 3, 3, 3))
conv((1, 1, 30, 30), (16, 1, 3, 3))
conv((2, 5, 11, 9), (7, 5, 3, 2), stride=(2, 3))
conv((1, 4, 12, 12), (6, 4, 3, 3), dilation=(2, 2))
conv((2, 8, 5, 5), (4, 8, 1, 1))
conv((1, 8, 7, 7), (20, 8, 1, 1), stride=(2, 2))
conv((1, 3, 9, 9), (5, 3, 3, 3), special=True)
# Few taps (C·R·S up to 16; 13 on AVX2), each output vector directly from
# the input vectors under it: a first layer's one or two channels, strided
# and dilated rows, rows of 34 (two whole vectors and a masked one) and of
# 4 (one short vector), NaN and ±Inf, full-precision data.
conv((2, 1, 13, 17), (5, 1, 3, 4), stride=(2, 1), dilation=(2, 3), special=True)
conv((1, 2, 9, 35), (3, 2, 2, 2))
conv((2, 1, 6, 6), (7, 1, 3, 3), special=True)
conv((2, 1, 13, 17), (5, 1, 3, 4), stride=(2, 1), dilation=(2, 3), precise=True)
# The top of the range: 14, 15 and 16 taps, direct on AVX-512 and im2col on
# AVX2 (and 18, im2col on both).
conv((2, 7, 6, 20), (5, 7, 2, 1), special=True)
conv((1, 5, 5, 19), (4, 5, 3, 1), precise=True)
conv((1, 4, 6, 9), (3, 4, 2, 2), special=True)
conv((1, 2, 6, 9), (3, 2, 3, 3))
# Micro-tiles of 8 rows for 32 (AVX-512) and a last panel of one vector
# (196 = 6·32 + 4 columns; 144 = 4·32 + 16), as in the Fashion CNN's second
# convolution; 13 rows in tiles of 7.
matmul(32, 196, 144, special=True)
conv((2, 16, 14, 14), (32, 16, 3, 3))
matmul(13, 40, 64, precise=True)
# Output images smaller than a vector (weight gradients): the filters on
# the lanes, rows of s transposed in registers. 3 x 3 pixels of 16 and 8
# filters (2 images, NaN and ±Inf); 4 x 4 pixels, strided and dilated, in
# two groups, 12 filters (masked lanes); rows of 21 taps (a block of 16 and
# 5 more); a filter that is a transpose of dY, read where it is.
conv((1, 8, 12, 12), (16, 8, 10, 10))
conv((2, 6, 9, 9), (8, 6, 7, 7), special=True)
conv((1, 4, 15, 15), (12, 4, 5, 5), stride=(2, 2), dilation=(2, 2))
conv((1, 3, 23, 23), (10, 3, 21, 21), precise=True)
transposed_filter_conv((1, 64, 10, 10), (64, 16, 8, 8), precise=True)
transposed_filter_conv((1, 5, 30, 30), (5, 16, 28, 28), special=True)
transposed_filter_conv((1, 5, 8, 22), (6, 12, 5, 20), perm=(1, 2, 0, 3), precise=True)
depthwise((2, 5, 10, 10), 3)
depthwise((1, 7, 23, 19), 3, dilation=(2, 2))
depthwise((2, 3, 12, 12), 3, stride=(2, 2))
# Strided along W: whole vectors inside the row, then masked ones (rows of
# 33 and 40 inputs), stride 3, a dilation, NaN and ±Inf.
depthwise((2, 4, 33, 33), 3, stride=(2, 2))
depthwise((1, 3, 16, 40), 3, stride=(1, 2), special=True)
# Full-precision data, whose products round: the x86 targets' fused
# multiply-adds (one rounding per step, in the same order) against a fused
# reference, the generic target's multiply-then-add against its own.
matmul(10, 40, 37, precise=True)
matmul(6, 19, 9, batch=(2,), precise=True)
conv((2, 5, 11, 9), (7, 5, 3, 2), stride=(2, 3), precise=True)
depthwise((2, 5, 10, 10), 3, precise=True)
depthwise((1, 2, 20, 50), 3, stride=(2, 3), dilation=(1, 2))
depthwise((1, 4, 9, 9), 5, special=True)
# Rows of at most 4 and 7 outputs get 4- and 8-lane vectors: one whole
# 4-lane vector per row, and masked 8-lane ones past a 7-output row.
depthwise((2, 6, 6, 6), 3, special=True)
depthwise((2, 5, 9, 9), 3, stride=(2, 2))
depthwise((1, 3, 9, 9), 3)
# Rows of at most 4 outputs and at least half a vector of channels: image by
# image in channels-last order (vectors of channels, transposed in and out),
# with channel tails (20, 12, 40 and 33 channels), stride 2, a dilation,
# NaN and ±Inf, and full-precision data.
depthwise((2, 20, 6, 6), 3, special=True, zero_fill=True)
depthwise((2, 12, 4, 4), 3, zero_fill=True)
depthwise((1, 40, 9, 9), 3, stride=(2, 2), zero_fill=True)
depthwise((3, 16, 7, 7), 3, dilation=(2, 2), special=True, zero_fill=True)
depthwise((2, 20, 6, 6), 3, precise=True, zero_fill=True)
padded_depthwise((2, 24, 4, 4), 3, (1, 1, 1, 1))
padded_depthwise((2, 33, 7, 7), 3, (1, 1, 1, 1), stride=(2, 2), special=True)
padded_depthwise((1, 16, 3, 2), 3, (0, 2, 1, 0), special=True)
# 2000 images: scratch buffers made per image on the stack (about 7 KiB
# each) would take 13 MiB of it; they are made once per thread. The row
# kernel's padded planes (rows of 12) likewise, over 301 images (an odd
# count: threads take 151 and 150).
depthwise((2000, 20, 6, 6), 3, zero_fill=True)
padded_depthwise((2000, 20, 4, 4), 3, (1, 1, 1, 1))
padded_depthwise((301, 8, 12, 12), 3, (1, 1, 1, 1))
# Padded: the pad folded into the kernel, one plane at a time; stride 2,
# uneven pads, rows wider than a vector, a 5x5 window, NaN and ±Inf.
padded_depthwise((2, 8, 7, 7), 3, (1, 1, 1, 1))
padded_depthwise((2, 6, 14, 14), 3, (1, 1, 1, 1), stride=(2, 2))
padded_depthwise((1, 5, 9, 20), 3, (0, 2, 1, 0), special=True)
padded_depthwise((3, 4, 6, 6), 5, (2, 2, 2, 2), special=True)
# NHWC (tq-cpu-channels-last): linalg.depthwise_conv_2d_nhwc_hwc, the taps
# read from the source where they are (the border's pixels checking each
# one), or from a padded copy of the image where more than 40% of the pixels
# reach the border (7x7 and smaller images; a window larger than the
# image); on an image too large to copy, every pixel checked (3 x 1000,
# 5x5).
# Vectors of channels with a masked tail (72, 120 and 20 channels), stride
# 2, uneven pads, no pad, NaN and ±Inf, 2 threads over 301 images.
padded_depthwise((2, 72, 7, 7), 3, (1, 1, 1, 1), nhwc=True)
padded_depthwise((2, 64, 14, 14), 3, (1, 1, 1, 1), stride=(2, 2), special=True, nhwc=True)
padded_depthwise((1, 120, 4, 4), 3, (1, 1, 1, 1), special=True, nhwc=True)
padded_depthwise((2, 20, 9, 20), 3, (0, 2, 1, 0), special=True, nhwc=True)
padded_depthwise((2, 16, 6, 6), 3, (0, 0, 0, 0), nhwc=True)
padded_depthwise((3, 8, 6, 6), 5, (2, 2, 2, 2), special=True, nhwc=True)
padded_depthwise((301, 24, 4, 4), 3, (1, 1, 1, 1), nhwc=True)
padded_depthwise((2, 20, 2, 3), 5, (2, 2, 2, 2), special=True, nhwc=True)
padded_depthwise((2, 20, 3, 1000), 5, (2, 2, 2, 2), special=True, nhwc=True)
pool("max", (2, 3, 8, 8), (2, 2), (2, 2))
pool("max", (1, 2, 4, 4), (2, 2), (2, 2), special=True)
pool("max", (2, 4, 28, 28), (2, 2), (2, 2), special=True)
pool("max", (1, 3, 35, 37), (3, 3), (2, 2), fill=False)
pool("max", (1, 2, 20, 40), (3, 2), (1, 3), dilation=(2, 2))
pool("max", (2, 2, 9, 9), (3, 3), (1, 1), special=True)
pool("sum", (2, 3, 9, 9), (2, 2), (2, 2))
pool("sum", (1, 2, 17, 33), (3, 3), (2, 2), fill=False, special=True)
pool("sum", (1, 3, 7, 7), (7, 7), (1, 1))
# NHWC (tq-cpu-channels-last): vectors of channels, a masked tail (20 and
# 40 channels), strides, a dilation, ±0, NaN and ±Inf.
pool("max", (2, 32, 14, 14), (2, 2), (2, 2), special=True, nhwc=True)
pool("max", (1, 20, 9, 9), (3, 3), (2, 2), special=True, nhwc=True)
pool("max", (2, 40, 8, 12), (3, 2), (1, 3), dilation=(2, 2), nhwc=True)
pool("sum", (2, 20, 9, 9), (2, 2), (2, 2), special=True, nhwc=True)
pool("sum", (1, 16, 7, 7), (7, 7), (1, 1), nhwc=True)
for kernel in ("conv", "matmul", "depthwise", "depthwise-small", "pool"):
    for body in EPILOGUES:
        fused(kernel, body, special=(body != "bias_relu"))

# A max pooling after a convolution (with and without its bias and ReLU),
# pooled image by image: whole and ragged windows, NaN and Inf.
conv_pool((3, 1, 12, 12), (16, 1, 3, 3), 2, 2)
conv_pool((2, 3, 11, 13), (5, 3, 3, 3), 3, 2, special=True)
conv_pool((2, 2, 8, 8), (4, 2, 1, 1), 2, 2, relu=False)
# The NHWC convolution of few taps (a first layer, tq-cpu-channels-last):
# vectors of filters per pixel, blocks of pixels with a tail (28 = 3·8 + 4,
# 13), 16, 20 (a masked second vector), 40 and 8 filters, 3 channels, a
# stride, a dilation, from the output's values, full-precision data (fused
# multiply-adds), NaN and ±Inf; with the max pooling after it, pooled image
# by image (301 images on 2 threads).
conv_nhwc((2, 1, 30, 30), (16, 1, 3, 3))
conv_nhwc((2, 1, 15, 17), (20, 1, 3, 3), stride=(2, 2), special=True)
conv_nhwc((1, 3, 11, 12), (40, 3, 3, 3), dilation=(2, 1), fill=False)
conv_nhwc((2, 3, 9, 9), (8, 3, 3, 3), precise=True)
conv_nhwc((2, 1, 30, 30), (16, 1, 3, 3), pool=(2, 2), special=True)
conv_nhwc((301, 1, 12, 12), (16, 1, 5, 5), pool=(3, 2))
conv_nhwc((3, 1, 14, 14), (20, 1, 3, 3), pool=(2, 2), precise=True)
# Windows that do not overlap down the rows, pooled a window's rows at a
# time: 13 rows of output into 6 (the last row in no window), and windows of
# 2 rows 3 apart (every third row in none).
conv_nhwc((2, 1, 15, 13), (16, 1, 3, 3), pool=(2, 2), special=True)
conv_nhwc((3, 1, 16, 14), (24, 1, 3, 3), pool=(2, 3), special=True)
# A padded input, padded image by image into a scratch buffer: pads of 1,
# uneven pads with another pad value, 3 channels (rows of W·3 values), a
# stride, with and without the pooling after it, 301 images on 2 threads.
conv_nhwc((2, 1, 28, 28), (16, 1, 3, 3), pool=(2, 2), pads=(1, 1, 1, 1))
conv_nhwc((2, 1, 9, 13), (20, 1, 3, 3), pads=(2, 0, 1, 3), pad_value=-1.5,
          special=True)
conv_nhwc((1, 3, 10, 11), (8, 3, 3, 3), stride=(2, 2), pads=(1, 1, 1, 1),
          precise=True)
conv_nhwc((301, 1, 8, 8), (16, 1, 3, 3), pads=(1, 1, 1, 1))
# A max pooling of a ReLU's output (marked: no -0 to order), on its own:
# ±0, NaN and Inf in, whole and masked row vectors, a clip at 6.
relu_pool((2, 3, 8, 8), 2, 2)
relu_pool((1, 4, 28, 28), 2, 2)
relu_pool((2, 2, 13, 11), 3, 2, clip=True)

# Channels and pixels that are whole blocks of 16 (and of 8), a channel
# tail (20, 3) and a pixel tail (15, 49), images of one pixel.
for xshape in ((1, 4, 4, 16), (2, 3, 5, 20), (3, 7, 7, 8), (2, 1, 1, 3)):
    for body in EPILOGUES:
        transposed(xshape, body, special=(body != "bias_relu"))
    transposed(xshape, "residual_clip", special=True, residual_first=True)

# Elementwise generics on their own: rows of 32 with a bias along them
# (two whole vectors per row), rows of 10 and 33 (masked tails), a bias
# along a leading dim (a scalar per row), all dims flattened into one
# vector loop, the old value of the target read, NaN and ±Inf.
for body in EPILOGUES:
    elementwise((64, 8, 32), 2, body, special=(body != "bias_relu"))
elementwise((3, 10), 1, "bias_relu", special=True)
elementwise((5, 33), 1, "swish_select", special=True)
elementwise((4, 6, 7), 0, "residual_clip", special=True)
elementwise((2, 3, 5, 7), 1, "bias_relu", accumulate=True, special=True)
elementwise((7,), 0, "bias_relu", accumulate=True)

# Reductions over the last dim, one row per lane: rows of 32 (two blocks
# of 16), 8 and 49 (a masked last block), row counts that are not a
# multiple of 16, NaN, ±Inf and ±0.
row_reduction((64, 8, 32), "sum")
row_reduction((5, 8), "max", special=True)
row_reduction((3, 7, 49), "sum", special=True)
row_reduction((37, 16), "max", special=True)
# Over the first dim: blocks of 8 vectors held over the rows (a bias
# gradient's 64 × 16 × 28 × 28: 98 blocks), a last block of fewer vectors,
# its last one masked, NaN and ±Inf.
column_reduction((64, 16, 28, 28), "sum")
column_reduction((5, 3, 47), "sum", special=True)
column_reduction((9, 300), "max", special=True)
column_reduction((3, 2, 5), "max", special=True)
# Over the dims between the first and the last (NHWC global pooling), once
# per image: whole vectors, a block of 8 and one more (144 channels), a
# masked last vector, a bias per channel; NaN and ±Inf.
middle_reduction((6, 7, 7, 16), 2, "sum")
middle_reduction((3, 4, 4, 144), 2, "sum", special=True)
middle_reduction((5, 3, 3, 37), 2, "max", special=True)
middle_reduction((2, 5, 200), 1, "sum", special=True)

print(f"float kernel cases: {cases}, mismatches: {failures}")
# CHECK: targets: {{.*}}generic; not on this host:
# CHECK-NOT: MISMATCH
# CHECK: float kernel cases: {{[1-9][0-9]*}}, mismatches: 0
