"""The side-by-side table of scale granularities (docs/ONNX.md): every
bundled model quantized with square VxV tiles, 1xV vectors, one scale per
channel and one per tensor, at 8 and 4 bits, and the variants that close
the 4-bit gap of square tiles. For each: held-out accuracy on the CPU
backend, the bits per element of the quantized weights and activations
(scales included, read from the quantized program's types), and the PPU
simulator's cycles for the whole batch where tq-to-ppu can run it.
After them, the published openWakeWord models when scripts/fetch-models.sh
has cached them (tq.models.granularity_wakeword: two heads and the
embedding model, about six minutes); otherwise one line says why not.

    /usr/bin/python3 -m tq.models.granularity BUILD_DIR [MODEL ...]

MODEL is digits, fashion, transformer, mobilenet, wakeword-heads,
wakeword-embedding or wakeword (both; default: all).

It prints a Markdown table (scripts/update-docs.sh granularity).
"""
import math
import os
import re
import sys
import tempfile

from tq.models.evaluate import MODELS, evaluate, held_out
from tq.ppu import Flow

V = 16
VARIANTS = [("f32", None)] + [
    (f"{label}, {bits}-bit", f"tile={V} granularity={g} act-bits={bits} weight-bits={bits}")
    for bits in (8, 4)
    for g, label in (("tile", "VxV"), ("vector", "1xV"), ("channel", "per-channel"),
                     ("tensor", "per-tensor"))
] + [
    # What narrows the 4-bit gap of square tiles.
    ("VxV, 4-bit weights, 8-bit activations",
     f"tile={V} act-bits=8 weight-bits=4"),
    ("VxV with V=8, 4-bit", "tile=8 act-bits=4 weight-bits=4"),
    # The A4 search in a band that lands near 4 bits on these models (the
    # weights' widths: 4 and 5 on the digits CNN), with one V per layer
    # among 8, 16 and 32 (tile-candidates).
    ("per-layer V (8, 16, 32), widths near 4 bits",
     f"tile={V} policy=adaptive tile-candidates=8,16,32 low=0.15 high=0.4 min-bits=2 "
     "max-bits=8"),
    # The same band with a width per weight tile, searched at compile time;
    # the activations keep a fixed width (run-time-search=false: tq-to-cpu
    # does not lower a run-time per-tile search). A filter read through a
    # tq.transpose (every NCHW convolution's) gets one width for the tensor.
    *[(f"VxV, per-tile weight widths in the same band, {a}-bit activations",
       f"tile={V} policy=adaptive per-tile=true run-time-search=false act-bits={a} "
       "low=0.15 high=0.4 min-bits=2 max-bits=8") for a in (4, 8)],
]

# The bundled models of the table: evaluate's, and the MobileNet-style CNN
# (held out on Fashion-MNIST like the Fashion CNN).
TABLE_MODELS = {**MODELS, "mobilenet": ("MobileNet-style CNN", "fashion_mobilenet.onnx")}

# Bits of one scale (and of an offset) per tile, by scale kind.
SCALE_BITS = {"f32": 32, "pow2": 8, "pow2_f32": 40}

TILED = re.compile(r"!tq\.tiled<([0-9x]+)xi(\d+):(\d+|per_tile), (\w+), tile = ([0-9x]+), "
                   r"dims = \[([0-9, ]+)\](?:, scale = (\w+))?(, offset)?>")
# A per-tile width is stored beside its tile's scale, in a byte.
WIDTH_BITS = 8


def tensor_bits(type_text, average_bits=None):
    """(elements, bits) of one tiled type: its values, and a scale (plus
    an offset) per tile. A `per_tile` type counts `average_bits` per value
    (the search's record) and a width per tile; None if it has no record,
    or for a width chosen at run time (`?`)."""
    m = TILED.fullmatch(type_text)
    if not m or (m.group(3) == "per_tile" and average_bits is None):
        return None
    shape = [int(d) for d in m.group(1).split("x")]
    tile = [int(d) for d in m.group(5).split("x")]
    dims = [int(d) for d in m.group(6).split(",")]
    scale = SCALE_BITS[m.group(7) or "f32"] + (32 if m.group(8) else 0)
    if m.group(3) == "per_tile":
        bits, scale = average_bits, scale + WIDTH_BITS
    else:
        bits = int(m.group(3))
    elements = math.prod(shape)
    tiles = elements
    for d, t in zip(dims, tile):
        tiles = tiles // shape[d] * math.ceil(shape[d] / t)
    return elements, elements * bits + tiles * scale


def bits_per_element(text):
    """Average bits per element of the weights (tq.constant) and of the
    other quantized tensors (tq.quantize results), scales included; None
    where there are none, or where a width is chosen at run time."""
    sums = {"tq.constant": [0, 0, True], "tq.quantize": [0, 0, True]}
    for line in text.splitlines():
        for op in sums:
            if f"= {op} " not in line:
                continue
            types = re.findall(r"!tq\.tiled<[^>]*>", line)
            average = re.search(r"average_bits = ([0-9.e+-]+)", line)
            counted = tensor_bits(types[-1], average and float(average.group(1))) \
                if types else None
            if counted:
                sums[op][0] += counted[0]
                sums[op][1] += counted[1]
            elif types:
                sums[op][2] = False
    return tuple(b / e if e and known else None for e, b, known in sums.values())


def ppu_cell(options, r):
    """The PPU cycles of an evaluate.Row: "–" for f32, "not on the PPU"
    where tq-run --target=ppu failed, and "products on the host" where it
    ran but simulated no multiply-accumulate (the partitioner kept every
    product on the host, e.g. per-tile widths; the cycles would be noise)."""
    if not r.ppu_stats:
        return "–" if options is None else "not on the PPU"
    if r.ppu_stats.get("mac_ops", 1) == 0:
        return "products on the host"
    return f"{r.ppu_stats['cycles']:,}" + ("" if r.ppu_same else " (DIFFER)")


def print_rows(label, results):
    """The Markdown rows of one model: `results` holds, per VARIANTS entry,
    (evaluate.Row, quantized program text or None, a note appended to the
    accuracy cell). "vs f32" is in points against the f32 row."""
    f32 = results[0][0].cpu
    for i, ((variant, options), (r, text, note)) in enumerate(zip(VARIANTS, results)):
        weights, acts = bits_per_element(text) if text else (None, None)
        unset = "at run time" if "policy=adaptive" in (options or "") and \
            "run-time-search=false" not in options else ""
        fmt = lambda b: unset if b is None else f"{b:.2f}"  # noqa: E731
        delta = "" if options is None else f"{r.cpu - f32:+.2f}"
        print(f"| {label if i == 0 else ''} | {variant} | {r.cpu:.2f}%{note} | {delta} | "
              f"{fmt(weights)} | {fmt(acts)} | {r.cpu_ms:.2f} | {ppu_cell(options, r)} |",
              flush=True)


def bundled_rows(build, name):
    """The rows of a bundled model (TABLE_MODELS): tq.models.evaluate on
    its held-out set, then each variant quantized again for its types
    (evaluate keeps no text)."""
    here = os.path.dirname(os.path.abspath(__file__))
    models = os.path.join(here, "..", "..", "..", "models")
    bindir = os.path.join(build, "bin")
    label, file = TABLE_MODELS[name]
    x, y = held_out(name, models)
    model = os.path.join(models, file)
    rows = evaluate(build, model, "image", x, y, variants=VARIANTS, latency=True)
    flow = Flow(opt=os.path.join(bindir, "tq-opt"),
                workdir=tempfile.mkdtemp(prefix="tq-granularity-"))
    imported = flow.path("model.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"), model,
             "--input-shape=image:" + "x".join(map(str, x.shape)), "-o", imported)
    texts = []
    for i, (_, options) in enumerate(VARIANTS):
        text = None
        if options:
            with open(flow.opt(imported, f"-tq-quantize={options}", out=f"q{i}.mlir")) as f:
                text = f.read()
        texts.append(text)
    print_rows(f"{label} ({len(y)} images)", [(r, t, "") for r, t in zip(rows, texts)])


def run(build, names):
    from tq.models import granularity_wakeword as wakeword
    print(f"tq-quantize with tile={V} unless the variant says otherwise; accuracy "
          "on the CPU backend; bits per element include one scale per tile "
          "(32 bits for f32 scales, 8 more for a per-tile width); CPU time "
          "for the whole held-out batch on 1 thread (median of 20 calls, "
          "compilation excluded; it varies from run to run); PPU cycles for "
          "the whole held-out batch, whose logits are the CPU's bits where it "
          "runs.\n")
    real = [n for n in names if n in wakeword.MODELS]
    skipped = real and wakeword.missing()
    if real:  # never silently: the table says why they are not in it
        print(f"The openWakeWord models are skipped: {skipped}.\n" if skipped
              else wakeword.NOTE + "\n")
    print("| model | variant | accuracy | vs f32 | constant weights, bits/element | "
          "tensors quantized at run time, bits/element | CPU ms | PPU cycles |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        if name in TABLE_MODELS:
            bundled_rows(build, name)
    if real and not skipped:
        for label, results in wakeword.rows(build, real):
            print_rows(label, results)


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: python3 -m tq.models.granularity BUILD_DIR [MODEL ...]")
    from tq.models.granularity_wakeword import ALIASES, MODELS as REAL
    known = [*TABLE_MODELS, *REAL, *ALIASES]
    names = [m for n in sys.argv[2:] or [*TABLE_MODELS, *REAL] for m in ALIASES.get(n, [n])]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown model '{unknown[0]}' ({', '.join(known)})")
    run(sys.argv[1], names)


if __name__ == "__main__":
    main()
