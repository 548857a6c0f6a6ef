"""tile-quant Python package.

In process (the compiled module _tq_native, in build/python):
    tq.compile(onnx_path, ...) -> tq.Model, called with arrays by ONNX name;
    tq.quantize(array, tile=(32, 32), bits=8) -> tq.TiledTensor.
Quantized training through the tq-train driver:
    tq.train(onnx_path, data="digits", epochs=10, ...) -> tq.Training.
Also a numpy reference of the numerics (tq.reference), wrappers of the
command-line tools (tq.cpu, tq.ppu) and the model scripts (tq.models).
"""
from tq.api import Model, TiledTensor, TQError, compile, quantize  # noqa: F401
from tq.train import Training, train  # noqa: F401
