# RUN: %python %s tq-opt tq-run | FileCheck %s
# Constant weights with a width per tile on the CPU: tq-quantize with
# policy=adaptive per-tile=true run-time-search=false searches each weight
# tile's width at compile time (tq.constant ... tile_bits) and keeps the
# activations at act-bits. The two-layer MLP's result equals the numpy
# reference bit for bit: weights quantized tile by tile at the widths the
# compiler chose, activations at a fixed width; shapes that are not a
# multiple of V, f32 and pow2 scales, widths up to 8 (i8 storage) and up to
# 4 (i4 storage), every SIMD path of this host, 1 and 2 threads.
import json
import re
import sys

import numpy as np

from tq import reference as ref
from tq.cpu import Runner, host_targets, report_targets
from tq.examples import mlp_mlir
from tq.ppu import Flow

flow = Flow(opt=sys.argv[1])
cpu = Runner(sys.argv[2])
TARGETS = host_targets(sys.argv[2])
report_targets(TARGETS)
rng = np.random.default_rng(41)
M, K, H, N, V = 9, 20, 12, 5, 8
# Columns of very different magnitudes, so the tiles' errors differ.
w1 = (rng.standard_normal((K, H)) * np.linspace(0.05, 2, H)).astype(np.float32)
w1[:8, :8] = 0  # an all-zero tile
w2 = rng.standard_normal((H, N)).astype(np.float32)
w2[3, 2] = 40.0  # an outlier in one tile
x = rng.standard_normal((M, K)).astype(np.float32)
x[1, 4] = np.inf
src = flow.write("mlp.mlir", mlp_mlir(M, K, H, N, weights=(w1, w2)))

failures = 0
for scale, form in (("f32", "scaled"), ("pow2", "pow2")):
    for act, max_bits, band in ((8, 8, "low=0.01 high=0.04"),
                                (4, 4, "low=0.15 high=0.4")):
        options = (f"tile={V} scale={scale} act-bits={act} policy=adaptive "
                   f"per-tile=true run-time-search=false max-bits={max_bits} {band}")
        q = flow.opt(src, f"-tq-quantize={options}",
                     "-mlir-print-elementsattrs-with-hex-if-larger=-1")
        text = open(q).read()
        assert "tq.adaptive_bit_width" not in text, "a run-time search is left"
        # Each weight's widths, from the IR (a splat when all are equal).
        widths = [np.broadcast_to(np.array(json.loads(m), np.int64), (int(r), int(c)))
                  for m, r, c in re.findall(r"tile_bits = dense<([^>]*)> : tensor<(\d+)x(\d+)xi8>",
                                            text)]
        storage = sorted(set(re.findall(r"tq\.constant .*!tq\.tiled<\d+x\d+x(i\d+):per_tile", text)))
        t = (V, V)
        qx, sx, _, _ = ref.quantize(x, t, (0, 1), act, form)
        qw1, sw1, _, _ = ref.quantize(w1, t, (0, 1), widths[0], form)
        h = ref.matmul(qx, sx, t, qw1, sw1, t)
        qh, sh, _, _ = ref.quantize(np.maximum(h, np.float32(0)), t, (0, 1), act, form)
        qw2, sw2, _, _ = ref.quantize(w2, t, (0, 1), widths[1], form)
        want = ref.matmul(qh, sh, t, qw2, sw2, t)
        results = []
        for target in TARGETS:
            for threads in (1, 2):
                (got,) = cpu.run(text, [x], target=target, threads=threads, entry="mlp")
                results.append(got.tobytes() == want.tobytes())
        ok = all(results) and len(widths) == 2
        failures += not ok
        # The widths of the tiles that hold data (w1's first is all zero).
        distinct = sorted(set(widths[0].ravel()[1:].tolist() + widths[1].ravel().tolist()))
        print(f"{scale} act-bits={act} max-bits={max_bits}: "
              f"{'bit-exact' if ok else 'MISMATCH'} on {len(results)} runs; "
              f"storage {','.join(storage)}; widths used {distinct}; "
              f"more than one width: {len(distinct) > 1}")

print(f"failures: {failures}")
# CHECK: f32 act-bits=8 max-bits=8: bit-exact {{.*}} storage i8; {{.*}} more than one width: True
# CHECK: f32 act-bits=4 max-bits=4: bit-exact {{.*}} storage i4; {{.*}} more than one width: True
# CHECK: pow2 act-bits=8 max-bits=8: bit-exact {{.*}} storage i8; {{.*}} more than one width: True
# The pow2 steps leave every 4-bit tile of data at 4 bits in this band.
# CHECK: pow2 act-bits=4 max-bits=4: bit-exact {{.*}} storage i4;
# CHECK: failures: 0
