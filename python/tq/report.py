"""An HTML report of a model quantized by tile-quant:

    python3 -m tq report MODEL.onnx --data DATA.npz [-o report.html]
                         [--quantize "tile=16"] [--limit 512] [--no-ppu]

DATA.npz holds the inputs, by ONNX input name (or `x` for the first one),
and optionally the labels (`y` or `labels`). The report has:

- the float and quantized outputs compared (relative error, agreement of
  the classes, accuracy when labels are given);
- each quantized layer's error: the output error when only that layer is
  quantized (the others kept float), and the A3 error of its weight tiles;
- the bit widths per layer (the run-time choices under policy=adaptive);
- the PPU simulator's statistics of one batch, and whether it gives the
  CPU's bits;
- the latency of the quantized model against the float one, measured in the
  same run;
- plots: the weight with the largest error, per tile (step and error), and
  the widths per layer.
"""
import argparse
import base64
import html
import io
import json
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

import tq
from tq import plots


def load_data(path, input_names, limit):
    data = np.load(path)
    feeds = {}
    for i, name in enumerate(input_names):
        key = name if name in data else ("x" if i == 0 and "x" in data else None)
        if key is None:
            raise SystemExit(f"tq report: error: {path} has no array '{name}' "
                             f"(the model's input {i}; it has {', '.join(data.files)})")
        feeds[name] = data[key][:limit]
    labels = next((data[k][:limit] for k in ("y", "labels") if k in data), None)
    return feeds, labels


def graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def layer_weights(model):
    """{node name: its weight initializer (the 2nd input) as a 2-D array}."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    out = {}
    for n in model.graph.node:
        if n.op_type in ("Conv", "MatMul", "Gemm") and len(n.input) > 1 \
                and n.input[1] in inits:
            w = inits[n.input[1]].astype(np.float32)
            if n.op_type == "MatMul":
                w = w.T  # [K, N] -> [N, K]: rows are output channels
            out[n.name] = w.reshape(w.shape[0], -1)
    return out


def relative_error(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    denom = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / denom) if denom else 0.0


def median_ms(model, feeds, repeat=5):
    model(**feeds)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        model(**feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def figure_html(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plots.plt.close(fig)
    return ('<img alt="plot" src="data:image/png;base64,'
            + base64.b64encode(buf.getvalue()).decode() + '">')


def table(headers, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r)
                   + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def build(model_path, data_path, quantize="tile=16", limit=512, ppu=True,
          log=print):
    """The report's figures, as a dict (what the HTML shows)."""
    onnx_model = onnx.load(model_path)
    names = graph_inputs(onnx_model)
    feeds, labels = load_data(data_path, names, limit)
    shapes = {n: a.shape for n, a in feeds.items()}
    options = tq.api.quantize_options(quantize)
    t0 = time.perf_counter()
    log(f"tq report: compiling {os.path.basename(model_path)}, float and "
        f"quantized ({options or 'defaults'})")
    fmodel = tq.compile(model_path, shapes=shapes, quantize=False)
    qmodel = tq.compile(model_path, shapes=shapes, quantize=options or None,
                        profile=True)
    fout, qout = fmodel(**feeds), qmodel(**feeds)
    out_name = next(iter(qmodel.outputs))
    f, q = fout[out_name], qout[out_name]
    r = {"model": os.path.basename(model_path), "samples": len(next(iter(feeds.values()))),
         "options": options or "(tq-quantize defaults)", "output": out_name,
         "relative_error": relative_error(q, f)}
    if f.ndim == 2:
        r["class_agreement"] = float((f.argmax(1) == q.argmax(1)).mean())
        if labels is not None:
            r["accuracy_float"] = float((f.argmax(1) == labels).mean())
            r["accuracy_quantized"] = float((q.argmax(1) == labels).mean())

    # Per layer: only that layer quantized.
    qmodel.reset()
    qmodel(**feeds)
    prof = qmodel.profile()
    quantized_layers = [row["layer"] for row in prof["layers"]
                        if row["kind"].startswith("tq.")]
    # A kernel that applies the ops after it (bias, activation) is named
    # "kernel+op+..."; the quantized layer is the first name.
    nodes = []
    for layer in quantized_layers:
        name = layer.split("+")[0]
        if name not in nodes:
            nodes.append(name)
    weights = layer_weights(onnx_model)
    opt = dict(kv.split("=", 1) for kv in options.split() if "=" in kv)
    tile = int(opt.get("tile", 32))
    # The weight tiles as the options quantize them (adaptive: up to max-bits).
    wbits = int(opt.get("max-bits", 8) if opt.get("policy") == "adaptive"
                else opt.get("weight-bits", 8))
    wscale = opt.get("scale", "f32")
    r["layers"] = []
    for node in nodes:
        others = [n for n in nodes if n != node]
        opts = options + (f" keep-float={','.join(others)}" if others else "")
        log(f"tq report: layer {node} alone")
        alone = tq.compile(model_path, shapes=shapes, quantize=opts)(**feeds)[out_name]
        row = {"layer": node, "output_error": relative_error(alone, f)}
        if node in weights:
            row["weight_error"] = tq.quantize(weights[node], tile=tile, bits=wbits,
                                              scale=wscale).error()
        r["layers"].append(row)

    # Widths: the run-time choices (PPU width inputs) or the static ones.
    r["widths"] = {}
    if ppu:
        log("tq report: one batch on the PPU simulator")
        pmodel = tq.compile(model_path, shapes=shapes, quantize=options or None,
                            target="ppu")
        pout = pmodel(**feeds)[out_name]
        stats = pmodel.ppu_stats()
        r["ppu"] = {"same_bits_as_cpu": pout.tobytes() == q.tobytes(),
                    "launches": stats["launches"], **stats["stats"]}
        for w in stats["widths"]:
            if w["bits"]:
                r["widths"][w["layer"]] = float(np.mean(w["bits"]))
    r["widths_source"] = "chosen at run time (PPU width inputs)"
    if not r["widths"]:
        if opt.get("policy") in ("adaptive", "schedule"):
            r["widths_source"] = ("not measured: run-time widths are read on the "
                                  "PPU target (drop --no-ppu)")
        else:
            r["widths_source"] = "the static widths of the options"
            bits = int(opt.get("weight-bits", opt.get("act-bits", 8)))
            r["widths"] = {n: bits for n in nodes}

    # Timed without the profile's per-kernel timers.
    timed = tq.compile(model_path, shapes=shapes, quantize=options or None)
    r["latency_ms"] = {"float": median_ms(fmodel, feeds),
                       "quantized": median_ms(timed, feeds)}
    r["latency_ratio"] = r["latency_ms"]["quantized"] / r["latency_ms"]["float"]
    r["profile"] = prof["kinds"]
    worst = max((row for row in r["layers"] if "weight_error" in row),
                key=lambda row: row["weight_error"], default=None)
    r["figures"] = {}
    if worst:
        t = tq.quantize(weights[worst["layer"]], tile=tile, bits=wbits, scale=wscale)
        r["figures"]["tiles"] = plots.tiles(t, title=worst["layer"])
    r["figures"]["widths"] = plots.widths(r["widths"])
    r["seconds"] = time.perf_counter() - t0
    return r


def render(r):
    pct = lambda v: f"{100 * v:.2f}%"  # noqa: E731
    summary = [("samples", r["samples"]), ("quantize options", r["options"]),
               (f"relative error of '{r['output']}'", f"{r['relative_error']:.4g}")]
    if "class_agreement" in r:
        summary.append(("classes agreeing with float", pct(r["class_agreement"])))
    if "accuracy_float" in r:
        summary += [("accuracy, float", pct(r["accuracy_float"])),
                    ("accuracy, quantized", pct(r["accuracy_quantized"]))]
    lat = r["latency_ms"]
    summary.append(("latency, quantized / float (same run)",
                    f"{lat['quantized']:.3f} / {lat['float']:.3f} ms = {r['latency_ratio']:.2f}"))
    parts = [f"<h1>tile-quant report: {html.escape(r['model'])}</h1>",
             table(["", ""], summary),
             "<h2>Error per layer</h2><p>Output error with only this layer "
             "quantized (the others float), and the A3 error of its weight tiles.</p>",
             table(["layer", "output error", "weight A3 error"],
                   [(l["layer"], f"{l['output_error']:.4g}",
                     f"{l['weight_error']:.4g}" if "weight_error" in l else "")
                    for l in r["layers"]]),
             f"<h2>Bit widths</h2><p>{html.escape(r['widths_source'])}</p>",
             table(["layer", "bits"], [(k, f"{v:g}") for k, v in r["widths"].items()]),
             r["figures"]["widths"]]
    if "tiles" in r["figures"]:
        parts += ["<h2>The weight with the largest error, per tile</h2>",
                  r["figures"]["tiles"]]
    if "ppu" in r:
        parts += ["<h2>PPU simulator (one batch)</h2>",
                  table(["counter", "value"], list(r["ppu"].items()))]
    parts += ["<h2>Time per op kind (quantized, CPU)</h2>",
              table(["kind", "calls", "ms", "share"],
                    [(k["kind"], k["calls"], f"{k['ms']:.3f}", pct(k["share"]))
                     for k in r["profile"]])]
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:.2em .6em;text-align:left}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>tile-quant "
            f"report</title><style>{style}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tq report",
                                description="HTML report of a quantized model")
    p.add_argument("model", help="an ONNX model")
    p.add_argument("--data", required=True,
                   help=".npz with the inputs (by ONNX name, or x) and y/labels")
    p.add_argument("-o", "--output", default="report.html")
    p.add_argument("--quantize", default="tile=16",
                   help="tq-quantize options (default: tile=16)")
    p.add_argument("--limit", type=int, default=512, help="samples used")
    p.add_argument("--no-ppu", action="store_true", help="skip the PPU simulator")
    p.add_argument("--json", help="also write the figures as JSON here")
    p.add_argument("--figures", help="also save the plots as PNG files here "
                   "(a directory)")
    a = p.parse_args(argv)
    if a.limit < 1:
        p.error("--limit must be positive")
    for path in (a.model, a.data):
        if not os.path.exists(path):
            p.error(f"no such file: {path}")
    try:
        r = build(a.model, a.data, a.quantize, a.limit, not a.no_ppu,
                  log=lambda m: print(m, file=sys.stderr))
    except tq.TQError as e:
        print(f"tq report: error: {e}", file=sys.stderr)
        return 1
    if a.figures:
        os.makedirs(a.figures, exist_ok=True)
        for name, fig in r["figures"].items():
            fig.savefig(os.path.join(a.figures, f"{name}.png"), dpi=90)
    text = render(dict(r, figures={k: figure_html(v) for k, v in r["figures"].items()}))
    with open(a.output, "w") as f:
        f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({k: v for k, v in r.items() if k != "figures"}, f, indent=1)
    print(f"tq report: wrote {a.output} ({r['seconds']:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
