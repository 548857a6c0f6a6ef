"""tile-quant Python package.

In process (the compiled module _tq_native, in build/python):
    tq.compile(onnx_path, ...) -> tq.Model, called with arrays by ONNX name;
    tq.quantize(array, tile=(32, 32), bits=8) -> tq.TiledTensor.
Also a numpy reference of the numerics (tq.reference), wrappers of the
command-line tools (tq.cpu, tq.ppu) and the model scripts (tq.models).
"""
from tq.api import Model, TiledTensor, TQError, compile, quantize  # noqa: F401
