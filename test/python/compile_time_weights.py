# RUN: %python %s tq-opt tq-ref | FileCheck %s
# Issue 3 numerics: weights quantized at compile time by tq-quantize-constants
# (data and scales as they appear in the printed IR) equal what the reference
# numerics (tq-ref) compute for the same tensor, for every scale kind, with
# and without offsets, and after the A4 bit-width search.
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

TQ_OPT, TQ_REF = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
tmp = tempfile.mkdtemp()
failures = 0


def run(*args):
    out = subprocess.run(list(map(str, args)), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout


def dense_literal(a):
    rows = ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in a)
    return f"dense<[{rows}]>"


def parse_dense(text, dtype):
    """Parses a printed dense<...> literal (nested lists or a splat)."""
    body = text.strip()
    if not body.startswith("["):
        return np.array(float(body) if dtype == np.float32 else int(body), dtype)
    return np.array(eval(body), dtype)


def resource(ir, key, dtype):
    """The values of dense resource `key`: its blob in the module's
    dialect_resources section, hex, after the 4-byte alignment."""
    blob = re.search(r"^\s*" + re.escape(key) + r': "0x([0-9A-F]*)"', ir, re.M).group(1)
    return np.frombuffer(bytes.fromhex(blob)[4:], dtype).astype(np.int32)


def ir_constant(ir, shape, grid):
    m = re.search(r"tq\.constant \{(.*)\} : (!tq\.tiled<[^>]*>)", ir)
    attrs, ty = m.group(1), m.group(2)
    scales = re.search(r"scales = dense<(.*?)> : tensor<", attrs).group(1)
    blob = re.search(r"values = dense_resource<(.*?)> : tensor<[0-9x]*x(i8|i16)>", attrs)
    if blob:
        q = resource(ir, blob.group(1), np.int8 if blob.group(2) == "i8" else np.int16)
        q = q.reshape(shape)
    else:
        vals = re.search(r"values = dense<(.*?)> : tensor<", attrs).group(1)
        q = np.broadcast_to(parse_dense(vals, np.int32), shape)
    s = np.broadcast_to(parse_dense(scales, np.float32), grid)
    offs = re.search(r"offsets = dense<(.*?)> : tensor<", attrs)
    o = np.broadcast_to(parse_dense(offs.group(1), np.float32), grid) if offs else None
    bits = re.search(r"bit_width = \{bits = (\d+)", attrs)
    return q, s, o, ty, int(bits.group(1)) if bits else None


FORMS = {("f32", False): "scaled", ("pow2", False): "pow2", ("pow2_f32", False): "pow2_scaled",
         ("f32", True): "offset_scaled", ("pow2", True): "offset_pow2",
         ("pow2_f32", True): "offset_pow2_scaled"}
w = (rng.standard_normal((24, 40)) * np.linspace(0.1, 3, 40)).astype(np.float32)
wpath = os.path.join(tmp, "w.npy")
np.save(wpath, w)
grid = (3, 5)
checked = 0
for (kind, offset), form in FORMS.items():
    for bits in (4, 8):
        ty = f"!tq.tiled<24x40xi8:{bits}, f32, tile = 8x8, dims = [0, 1], scale = {kind}{', offset' if offset else ''}>"
        src = (f"func.func @f() -> {ty} {{\n"
               f"  %c = arith.constant {dense_literal(w)} : tensor<24x40xf32>\n"
               f"  %q = tq.quantize %c : tensor<24x40xf32> -> {ty}\n"
               f"  return %q : {ty}\n}}\n")
        mlir = os.path.join(tmp, "w.mlir")
        open(mlir, "w").write(src)
        ir = run(TQ_OPT, mlir, "-tq-quantize-constants",
             "-mlir-print-elementsattrs-with-hex-if-larger=-1")
        q, s, o, _, _ = ir_constant(ir, w.shape, grid)
        prefix = os.path.join(tmp, "ref")
        run(TQ_REF, "quantize", wpath, "--tile=8x8", f"--bits={bits}", f"--form={form}", "-o", prefix)
        checked += 1
        ok = (np.array_equal(q, np.load(prefix + ".q.npy")) and
              np.array_equal(s, np.load(prefix + ".steps.npy")) and
              (o is None or np.array_equal(o, np.load(prefix + ".offsets.npy"))))
        if not ok:
            failures += 1
            print(f"MISMATCH scale={kind} offset={offset} bits={bits}")

# After the A4 search: the width and the data match tq-ref's search and
# quantization at that width.
ty = "!tq.tiled<24x40xi8:8, f32, tile = 8x8, dims = [0, 1], scale = f32>"
src = (f"func.func @f() -> tensor<24x40xf32> {{\n"
       f"  %c = arith.constant {dense_literal(w)} : tensor<24x40xf32>\n"
       f"  %q = tq.quantize %c : tensor<24x40xf32> -> {ty}\n"
       f"  %d = tq.dequantize %q : {ty} -> tensor<24x40xf32>\n"
       f"  return %d : tensor<24x40xf32>\n}}\n")
open(mlir, "w").write(src)
ir = run(TQ_OPT, mlir, "-tq-adaptive-bit-width=low=0.001 high=0.004 max-bits=16",
         "-tq-quantize-constants", "-mlir-print-elementsattrs-with-hex-if-larger=-1")
q, s, _, ir_type, ir_bits = ir_constant(ir, w.shape, grid)
words = run(TQ_REF, "search", wpath, "--tile=8x8", "--low=0.001", "--high=0.004",
            "--init=8", "--max=16", "--form=scaled").split()
ref_bits = int(words[1])
run(TQ_REF, "quantize", wpath, "--tile=8x8", f"--bits={ref_bits}", "--form=scaled", "-o", prefix)
checked += 1
if not (ir_bits == ref_bits and f":{ref_bits}," in ir_type and
        np.array_equal(q, np.load(prefix + ".q.npy")) and
        np.array_equal(s, np.load(prefix + ".steps.npy"))):
    failures += 1
    print(f"MISMATCH search: IR bits {ir_bits} ({ir_type}), tq-ref bits {ref_bits}")
print(f"searched width {ref_bits}")
print(f"checked {checked}, failures {failures}")
# CHECK-NOT: MISMATCH
# CHECK: searched width {{[0-9]+}}
# CHECK: checked 13, failures 0
