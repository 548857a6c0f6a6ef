"""tile-quant Python package: a numpy reference of the numerics and tools."""
