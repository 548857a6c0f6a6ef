"""The in-process API: ONNX models compiled and called, and tiled tensors.

    import tq
    model = tq.compile("fashion_cnn.onnx", dims={"batch": 64},
                       quantize=dict(tile=16, bits=8))
    logits = model(image=x)["logits"]

`tq.compile` imports, quantizes and compiles in this process (the compiled
module `_tq_native`, a pybind11 binding of the C API tq-c/Model.h, which
the build puts in build/python). `tq.quantize` is the reference tile
quantization of the C++ runtime (SPEC T1, A2, A3).
"""
import json
import warnings

import numpy as np

try:
    import _tq_native as _native
except ImportError as e:  # pragma: no cover - depends on the environment
    _native = None
    _import_error = e

__all__ = ["compile", "Model", "quantize", "TiledTensor", "TQError"]


class TQError(RuntimeError):
    """A compilation or call that tile-quant refused, with its message."""


def _lib():
    if _native is None:
        raise ImportError(
            "tile-quant's compiled module _tq_native is not on the path: build "
            "the project (scripts/build.sh) and put build/python on PYTHONPATH "
            f"({_import_error})")
    return _native


def _option_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    return str(v)


def quantize_options(quantize):
    """tq-quantize's option string for a dict of options: keys with '_' or
    '-'; `bits` is the activation and the weight width, or under
    policy="adaptive" the largest width searched (max-bits)."""
    if isinstance(quantize, str):
        return quantize
    parts = []
    adaptive = (quantize or {}).get("policy") == "adaptive"
    for key, value in (quantize or {}).items():
        key = key.replace("_", "-")
        if key == "bits" and adaptive:
            parts.append(f"max-bits={value}")
        elif key == "bits":
            parts += [f"act-bits={value}", f"weight-bits={value}"]
        else:
            parts.append(f"{key}={_option_value(value)}")
    return " ".join(parts)


def compile(onnx_path, shapes=None, dims=None, quantize=None, target="cpu",
            threads=1, profile=False, machine=None):
    """Imports, quantizes and compiles an ONNX model.

    shapes:   {input name: shape}, for inputs with unknown dims;
    dims:     {symbolic dim: value}, like onnxruntime's free-dimension
              overrides (e.g. {"batch": 64});
    quantize: None for tq-quantize's defaults, False for the float model, or
              a dict (or string) of tq-quantize options: dict(tile=32, bits=8,
              policy="adaptive");
    target:   "cpu" (this host's best), an instruction set ("avx2", ...) or
              "ppu" (the tq ops on the PPU simulator; `machine` is its
              tq-to-ppu options);
    profile:  time every layer (Model.profile()).
    """
    lib = _lib()
    shape_specs = [f"{name}:{'x'.join(str(int(d)) for d in shape)}"
                   for name, shape in (shapes or {}).items()]
    dim_specs = [f"{name}={int(value)}" for name, value in (dims or {}).items()]
    float_model = quantize is False
    options = "" if quantize in (None, False) else quantize_options(quantize)
    isa = "native" if target == "cpu" else target
    try:
        native = lib.Model(str(onnx_path), options, float_model, isa,
                           machine or "", int(threads), bool(profile),
                           dim_specs, shape_specs)
    except RuntimeError as e:
        raise TQError(str(e)) from None
    return Model(native, target, str(onnx_path))


class Model:
    """A compiled model. Call it with its inputs by ONNX name (or in order);
    it returns a dict of its outputs by ONNX name."""

    def __init__(self, native, target, path):
        self._native = native
        self.target = target
        self.path = path
        self.inputs = {n: (tuple(s), np.dtype(t))
                       for n, t, s in native.signature(False)}
        self.outputs = {n: (tuple(s), np.dtype(t))
                        for n, t, s in native.signature(True)}
        self.quantized = "tq.quantize" in native.program()

    def __repr__(self):
        def sig(d):
            return ", ".join(f"{n}: {t}{list(s)}" for n, (s, t) in d.items())
        return f"<tq.Model {self.path} ({sig(self.inputs)}) -> ({sig(self.outputs)}) on {self.target}>"

    def __call__(self, *args, **kwargs):
        names = list(self.inputs)
        if len(args) > len(names):
            raise TypeError(f"the model takes {len(names)} inputs "
                            f"({', '.join(names)}), got {len(args)}")
        feeds = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in self.inputs:
                raise TypeError(f"the model has no input '{name}' "
                                f"(its inputs: {', '.join(names)})")
            if name in feeds:
                raise TypeError(f"input '{name}' given twice")
            feeds[name] = value
        missing = [n for n in names if n not in feeds]
        if missing:
            raise TypeError(f"missing input(s): {', '.join(missing)}")
        arrays = []
        for name in names:
            shape, dtype = self.inputs[name]
            a = np.asarray(feeds[name])
            if a.shape != shape:
                raise ValueError(f"input '{name}' has shape {a.shape}; the "
                                 f"model was compiled for {shape}")
            if not np.can_cast(a.dtype, dtype, casting="same_kind"):
                raise TypeError(f"input '{name}' is {a.dtype}; the model "
                                f"takes {dtype}")
            arrays.append(np.ascontiguousarray(a, dtype=dtype))
            if self.quantized and dtype == np.float32 and \
                    not np.isfinite(arrays[-1]).all():
                warnings.warn(
                    f"input '{name}' has NaN or infinite values; quantized "
                    "layers read NaN as 0 and +-Inf as +-qmax (SPEC T3), so "
                    "the outputs may be finite where the float model's are "
                    "not", RuntimeWarning, stacklevel=2)
        try:
            results = self._native.call(arrays)
        except RuntimeError as e:
            raise TQError(str(e)) from None
        return dict(zip(self.outputs, results))

    @property
    def program(self):
        """The MLIR program that was compiled (quantized, with locations)."""
        return self._native.program()

    @property
    def phases(self):
        """Seconds per compilation phase: import, quantize, compile."""
        return {p["phase"]: p["seconds"]
                for p in json.loads(self._native.report("phases"))}

    def profile(self):
        """Time per layer (its ONNX node) and per op kind, summed over the
        calls since the last reset(), with each one's share of the kernel
        time: {"total_ms", "layers": [...], "kinds": [...]}, largest first.
        Needs compile(..., profile=True)."""
        try:
            sites = json.loads(self._native.report("profile"))
        except RuntimeError as e:
            raise TQError(str(e)) from None
        if not sites:
            raise TQError("no profile yet: call the model first")
        layers, kinds = {}, {}
        for s in sites:
            for table, key in ((layers, (s["layer"], s["kind"])),
                               (kinds, s["kind"])):
                row = table.setdefault(key, [0, 0.0])
                row[0] += s["calls"]
                row[1] += s["seconds"] * 1e3
        total = sum(ms for _, ms in layers.values())

        def rows(table, named):
            out = []
            for key, (calls, ms) in sorted(table.items(), key=lambda kv: -kv[1][1]):
                row = {"layer": key[0], "kind": key[1]} if named else {"kind": key}
                row.update(calls=calls, ms=ms,
                           share=ms / total if total else 0.0)
                out.append(row)
            return out
        return {"total_ms": total, "layers": rows(layers, True),
                "kinds": rows(kinds, False)}

    def ppu_stats(self):
        """What the PPU simulator counted over the calls since the last
        reset(): {"launches", "stats": {...}, "kernels", "widths"}."""
        try:
            return json.loads(self._native.report("ppu"))
        except RuntimeError as e:
            raise TQError(str(e)) from None

    def reset(self):
        """Clears the profile and the PPU statistics."""
        self._native.reset()


def quantize(array, tile=(32, 32), bits=8, scale="f32", offset=False):
    """The reference quantization of a 2-D array in tile[0] x tile[1] tiles,
    each with its own step (SPEC T1, A2): a TiledTensor. `scale` is "f32",
    "pow2" or "pow2_f32"; `offset` adds a per-tile offset. The parameters
    come from the finite elements; +-Inf saturates to +-qmax and NaN
    quantizes to 0 (TiledTensor.non_finite counts them)."""
    x = np.ascontiguousarray(array, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"quantize takes a 2-D array, got shape {x.shape}")
    if isinstance(tile, int):
        tile = (tile, tile)
    try:
        q, steps, offsets, non_finite = _lib().quantize(
            x, int(tile[0]), int(tile[1]), int(bits), scale, bool(offset))
    except RuntimeError as e:
        raise TQError(str(e)) from None
    return TiledTensor(q, steps, offsets, tuple(tile), int(bits), scale, x,
                       non_finite)


class TiledTensor:
    """Integers (.data) with a step and an offset per tile (.scales,
    .offsets: tile-grid arrays). Element (i, j) stands for
    data[i, j] * scales[i // tile[0], j // tile[1]] + offsets[...]."""

    def __init__(self, data, scales, offsets, tile, bits, scale, source,
                 non_finite=0):
        self.data, self.scales, self.offsets = data, scales, offsets
        self.tile, self.bits, self.scale = tile, bits, scale
        self.source, self.non_finite = source, non_finite

    @property
    def shape(self):
        return self.data.shape

    def _per_element(self, grid):
        rows, cols = self.data.shape
        return np.repeat(np.repeat(grid, self.tile[0], 0), self.tile[1], 1)[:rows, :cols]

    def dequantize(self):
        """The f32 values the tiles stand for (data * step + offset, in f32
        as the runtime computes them)."""
        return (self.data.astype(np.float32) * self._per_element(self.scales)
                + self._per_element(self.offsets)).astype(np.float32)

    @property
    def T(self):
        """The transpose (SPEC T4): the data transposed and the same
        scales, a transposed view of this tensor's grid (no
        requantization)."""
        return TiledTensor(self.data.T, self.scales.T, self.offsets.T,
                           self.tile[::-1], self.bits, self.scale,
                           self.source.T, self.non_finite)

    def error(self):
        """SPEC A3: log2(sum|x^ - x| / sum|x| + 1) over the finite elements
        of the quantized array (0 when they are all 0)."""
        x = self.source.astype(np.float64)
        finite = np.isfinite(x)
        xhat = self.dequantize().astype(np.float64)
        total = np.abs(x[finite]).sum()
        if total == 0:
            return 0.0
        return float(np.log2(np.abs(xhat[finite] - x[finite]).sum() / total + 1))

    def __repr__(self):
        return (f"<tq.TiledTensor {self.shape[0]}x{self.shape[1]}, "
                f"{self.tile[0]}x{self.tile[1]} tiles, {self.bits} bits, "
                f"scale {self.scale}>")
