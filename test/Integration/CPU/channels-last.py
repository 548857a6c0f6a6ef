# RUN: %python %s %tq_build | FileCheck %s
# The bundled CNNs in 8 bits (V=32) at batch 64 run with their float layers
# in NHWC (tq-cpu-channels-last, the default) and in the model's NCHW
# (--channels-last=false): the outputs are the same bits, on 1 and 2
# threads, on test images and on adversarial ones (all-zero images, NaN,
# ±Inf and ±1e30 pixels). The first layer (an f32 convolution on one
# channel) runs in NHWC too, so the first quantized convolution's input
# needs no tq.transpose. In the MobileNet-style model every activation
# transpose between two quantized convolutions goes: what is left is the
# squeeze-excitation's 1x1 planes'. In the two small CNNs the one
# linalg.transpose left is the last pooling's, before the flatten. Then a
# first convolution alone, with and without a pad and a max pooling, at
# batch 4 and 1, on 1 and 2 threads: the same bits in NHWC as in NCHW.
import os
import sys
import tempfile

import numpy as np

from tq.models import digits, fashion
from tq.ppu import Flow

build = sys.argv[1]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
bindir = os.path.join(build, "bin")
flow = Flow(opt=os.path.join(bindir, "tq-opt"),
            workdir=tempfile.mkdtemp(prefix="tq-channels-last-"))
rng = np.random.default_rng(3)


def adversarial(x):
    x = x.copy()
    x[:8] = 0
    flat = x[8:].reshape(-1)
    picks = rng.choice(flat.size, size=flat.size // 50, replace=False)
    flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 1e30, -1e30],
                                      dtype=np.float32), size=picks.size)
    return x


def same_bits(program, x, tag):
    """Whether `program` on `x` gives the same bytes with
    --channels-last=true as with false, on 1 and on 2 threads."""
    xin = flow.path(f"x-{tag}.npy")
    np.save(xin, x)
    same = []
    for threads in (1, 2):
        ys = []
        for layout in ("true", "false"):
            y = flow.path(f"y-{tag}-{threads}-{layout}.npy")
            flow.run(os.path.join(bindir, "tq-run"), program, f"--input={xin}",
                     f"--output={y}", f"--num-threads={threads}",
                     f"--channels-last={layout}")
            ys.append(np.load(y))
        same.append(ys[0].tobytes() == ys[1].tobytes())
    return same


x_fashion = np.ascontiguousarray(fashion.load("t10k", 64)[0])
x_digits = np.ascontiguousarray(
    digits.load_test(os.path.join(root, "models", "digits_test.npz"))[0][:64])

for name, x in (("digits_cnn", x_digits), ("fashion_cnn", x_fashion),
                ("fashion_mobilenet", x_fashion)):
    imported = flow.path(f"{name}.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"),
             os.path.join(root, "models", f"{name}.onnx"),
             "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", imported)
    quantized = flow.opt(imported, "-tq-quantize=tile=32", out=f"q-{name}.mlir")
    nhwc = flow.opt(quantized, "-tq-cpu-channels-last", out=f"c-{name}.mlir")
    with open(quantized) as f:
        before = f.read()
    with open(nhwc) as f:
        after = f.read()
    count = lambda text, op: text.count(f"= {op} ")
    print(f"{name}: linalg.transpose {count(before, 'linalg.transpose')} -> "
          f"{count(after, 'linalg.transpose')}, tq.transpose "
          f"{count(before, 'tq.transpose')} -> {count(after, 'tq.transpose')}, "
          f"depthwise NHWC {count(after, 'linalg.depthwise_conv_2d_nhwc_hwc')}, "
          f"conv NHWC {count(after, 'linalg.conv_2d_nhwc_hwcf')}")
    for data_name, data in (("test", x), ("adversarial", adversarial(x))):
        same = same_bits(quantized, data, f"{name}-{data_name}")
        print(f"{name} {data_name}: NHWC gives the same bits as NCHW: "
              f"1 thread {same[0]}, 2 threads {same[1]}")


# The first convolution alone, in f32 and in 8 bits: without a pad (under
# the batch split of 2 threads each share's image is a strided view, which
# stays with the loops as its NCHW form did) and with one, at batch 4 and
# at batch 1 (fewer images than threads: the rows are shared), followed by
# a max pooling or not.
for batch in (4, 1):
    for pad in (0, 1):
        for pool in (False, True):
            w = (np.round(rng.standard_normal((8, 1, 3, 3)) * 8) / 8).astype(np.float32)
            lit = "[" + ", ".join(
                "[[" + ", ".join("[" + ", ".join(f"{v:.4f}" for v in row) + "]"
                                 for row in f[0]) + "]]" for f in w) + "]"
            hp, h = 10 + 2 * pad, 8 + 2 * pad
            xt, pt = f"tensor<{batch}x1x10x10xf32>", f"tensor<{batch}x1x{hp}x{hp}xf32>"
            yt = f"tensor<{batch}x8x{h}x{h}xf32>"
            zt = f"tensor<{batch}x8x{h // 2}x{h // 2}xf32>"
            pad_ir = (f"""%p = tensor.pad %x low[0, 0, {pad}, {pad}] high[0, 0, {pad}, {pad}] {{
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  }} : {xt} to {pt}""" if pad else "")
            src = f"""
func.func @main(%x: {xt}) -> {zt if pool else yt} {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %w = arith.constant dense<{lit}> : tensor<8x1x3x3xf32>
  {pad_ir}
  %e = tensor.empty() : {yt}
  %f = linalg.fill ins(%zero : f32) outs(%e : {yt}) -> {yt}
  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
    ins({"%p" if pad else "%x"}, %w : {pt}, tensor<8x1x3x3xf32>) outs(%f : {yt}) -> {yt}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%y : {yt}) outs(%e : {yt}) {{
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  }} -> {yt}
""" + (f"""  %pe = tensor.empty() : {zt}
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : {zt}) -> {zt}
  %k = tensor.empty() : tensor<2x2xf32>
  %z = linalg.pooling_nchw_max {{dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}}
    ins(%r, %k : {yt}, tensor<2x2xf32>) outs(%pf : {zt}) -> {zt}
  return %z : {zt}
}}""" if pool else f"""  return %r : {yt}
}}""")
            path = flow.path(f"first-{batch}-{pad}-{pool}.mlir")
            with open(path, "w") as f:
                f.write(src)
            same = same_bits(path, rng.standard_normal((batch, 1, 10, 10)).astype(np.float32),
                             f"first-{batch}-{pad}-{pool}")
            print(f"first conv batch {batch} pad {pad} pool {pool}: NHWC gives the same "
                  f"bits as NCHW: 1 thread {same[0]}, 2 threads {same[1]}")

# CHECK: digits_cnn: linalg.transpose 1 -> 1, tq.transpose 1 -> 0, depthwise NHWC 0, conv NHWC 1
# CHECK: digits_cnn test: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: digits_cnn adversarial: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_cnn: linalg.transpose 1 -> 1, tq.transpose 1 -> 0, depthwise NHWC 0, conv NHWC 1
# CHECK: fashion_cnn test: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_cnn adversarial: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_mobilenet: linalg.transpose 21 -> 0, tq.transpose 21 -> 4, depthwise NHWC 6, conv NHWC 1
# CHECK: fashion_mobilenet test: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK: fashion_mobilenet adversarial: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
# CHECK-COUNT-8: first conv batch {{[14]}} pad {{[01]}} pool {{True|False}}: NHWC gives the same bits as NCHW: 1 thread True, 2 threads True
