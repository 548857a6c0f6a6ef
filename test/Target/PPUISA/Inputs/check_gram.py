"""x . x^T of one quantized 8x8 tile, from the simulator (y_N.npy at N
bits) against the numpy reference (python/tq/reference.py)."""
import sys

import numpy as np

from tq import reference as ref

x = np.load(sys.argv[1])
results = []
for path, bits in zip(sys.argv[2::2], sys.argv[3::2]):
    q, s, _, _ = ref.quantize(x, (8, 8), (0, 1), int(bits), "scaled")
    want = ref.matmul(q, s, (8, 8), q.T.copy(), s.T.copy(), (8, 8))
    got = np.load(path)
    results.append(got)
    print(f"{bits} bits: {'bit-exact' if got.tobytes() == want.tobytes() else 'MISMATCH'}")
print(f"the widths give different results: {results[0].tobytes() != results[1].tobytes()}")
