# RUN: %python %s tq-run | FileCheck %s
# Ahead-of-time compilation: tq-run --emit-shared links the program into a
# shared library (position-independent code, ld.lld; with threads it
# depends on libomp). Loaded with ctypes and called through its C
# interface (a pointer per memref descriptor, shaped results as
# out-parameters after the inputs), it computes what the JIT computes, bit
# for bit. @main is compiled as tq_main (_mlir_ciface_tq_main): the library
# exports no main, so a C program (with a main of its own) linked against
# it runs, and gets the same bits.
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np

from tq.cpu import Runner

cpu = Runner(sys.argv[1])
rng = np.random.default_rng(2)
src = """
!A = !tq.tiled<20x40xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
!B = !tq.tiled<40x36xi8:8, f32, tile = 16x16, dims = [0, 1], scale = f32>
func.func @main(%x: tensor<20x40xf32>, %w: tensor<40x36xf32>) -> tensor<20x36xf32> {
  %qa = tq.quantize %x : tensor<20x40xf32> -> !A
  %qb = tq.quantize %w : tensor<40x36xf32> -> !B
  %c = tq.matmul %qa, %qb : !A, !B -> tensor<20x36xf32>
  return %c : tensor<20x36xf32>
}
"""
x = rng.standard_normal((20, 40)).astype(np.float32)
w = rng.standard_normal((40, 36)).astype(np.float32)
jit, = cpu.run(src, [x, w])


class Memref2D(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * 2),
                ("strides", ctypes.c_int64 * 2)]


def descriptor(a):
    d = Memref2D()
    d.allocated = d.aligned = a.ctypes.data
    d.offset = 0
    d.sizes[0], d.sizes[1] = a.shape
    d.strides[0], d.strides[1] = a.shape[1], 1
    return d


for threads in (1, 2):
    lib_path = cpu.flow.path(f"mm{threads}.so")
    cpu.flow.run(sys.argv[1], cpu.flow.write(f"aot{threads}.mlir", src),
                 f"--emit-shared={lib_path}", f"--num-threads={threads}")
    lib = ctypes.CDLL(os.path.abspath(lib_path))
    out = np.zeros((20, 36), np.float32)
    args = [descriptor(x), descriptor(w), descriptor(out)]
    lib._mlir_ciface_tq_main(*[ctypes.byref(a) for a in args])
    same = out.tobytes() == jit.tobytes()
    print(f"threads={threads}: AOT {'equals' if same else 'DIFFERS FROM'} JIT")
    print(f"threads={threads}: exports main: {hasattr(lib, 'main')}")
# CHECK: threads=1: AOT equals JIT
# CHECK: threads=1: exports main: False
# CHECK: threads=2: AOT equals JIT
# CHECK: threads=2: exports main: False

sig = subprocess.run([sys.argv[1], cpu.flow.path("aot1.mlir"), "--print-signature"],
                     capture_output=True, text=True).stdout
print(sig.splitlines()[1].strip())
# CHECK: compiled as tq_main (C interface _mlir_ciface_tq_main)

# A C program of its own (with main) calling the library: it used to call
# back into its own main (the library's _mlir_ciface_main did) and crash.
C = r"""
#include <stdint.h>
#include <stdio.h>
typedef struct { float *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } M2;
void _mlir_ciface_tq_main(M2 *x, M2 *w, M2 *y);
static M2 view(float *p, int64_t r, int64_t c) {
  M2 m = {p, p, 0, {r, c}, {c, 1}};
  return m;
}
int main(void) {
  static float x[20 * 40], w[40 * 36], y[20 * 36];
  FILE *f = fopen("in.bin", "rb");
  if (!f || fread(x, 4, 800, f) != 800 || fread(w, 4, 1440, f) != 1440) return 2;
  fclose(f);
  M2 a = view(x, 20, 40), b = view(w, 40, 36), c = view(y, 20, 36);
  _mlir_ciface_tq_main(&a, &b, &c);
  f = fopen("out.bin", "wb");
  fwrite(y, 4, 720, f);
  fclose(f);
  return 0;
}
"""
work = os.path.abspath(cpu.flow.path("c"))
os.makedirs(work, exist_ok=True)
with open(os.path.join(work, "main.c"), "w") as f:
    f.write(C)
with open(os.path.join(work, "in.bin"), "wb") as f:
    f.write(x.tobytes() + w.tobytes())
lib_dir = os.path.dirname(os.path.abspath(cpu.flow.path("mm1.so")))
cc = shutil.which("clang-22") or "/usr/lib/llvm-22/bin/clang"
subprocess.run([cc, "main.c", "-o", "prog", os.path.join(lib_dir, "mm1.so"),
                f"-Wl,-rpath,{lib_dir}"], cwd=work, check=True)
rc = subprocess.run(["./prog"], cwd=work).returncode
got = np.fromfile(os.path.join(work, "out.bin"), np.float32).reshape(20, 36) \
    if rc == 0 else None
print(f"C program: rc={rc}, same bits as the JIT: "
      f"{got is not None and got.tobytes() == jit.tobytes()}")
# CHECK: C program: rc=0, same bits as the JIT: True
