# RUN: %python %s tq-run | FileCheck %s
# Ahead-of-time compilation: tq-run --emit-shared links the program into a
# shared library (position-independent code, ld.lld; with threads it
# depends on libomp). Loaded with ctypes and called through its C
# interface (_mlir_ciface_main: a pointer per memref descriptor, shaped
# results as out-parameters after the inputs), it computes what the JIT
# computes, bit for bit.
import ctypes
import os
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
    lib._mlir_ciface_main(*[ctypes.byref(a) for a in args])
    same = out.tobytes() == jit.tobytes()
    print(f"threads={threads}: AOT {'equals' if same else 'DIFFERS FROM'} JIT")
# CHECK: threads=1: AOT equals JIT
# CHECK: threads=2: AOT equals JIT
