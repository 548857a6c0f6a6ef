"""Plots of quantized tensors and bit widths, with matplotlib (Debian's
python3-matplotlib, the Agg backend: files, no display).

    fig = tq.plots.tiles(tq.quantize(w, tile=16))   # scale and error maps
    fig = tq.plots.widths({"conv1": 8, "fc": 6})    # width per layer
    fig = tq.plots.widths_over_time(log["epochs"])  # tq-train's JSON log
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def tile_errors(t):
    """SPEC A3 error of each tile of a TiledTensor (NaN for an all-zero or
    non-finite tile), as a tile-grid array."""
    x, xhat = t.source.astype(np.float64), t.dequantize().astype(np.float64)
    rows, cols = t.scales.shape
    out = np.full((rows, cols), np.nan)
    for i in range(rows):
        for j in range(cols):
            sl = (slice(i * t.tile[0], (i + 1) * t.tile[0]),
                  slice(j * t.tile[1], (j + 1) * t.tile[1]))
            a, b = x[sl], xhat[sl]
            finite = np.isfinite(a)
            total = np.abs(a[finite]).sum()
            if total > 0:
                out[i, j] = np.log2(np.abs(b[finite] - a[finite]).sum() / total + 1)
    return out


def tiles(t, title="weight"):
    """Two heatmaps of a TiledTensor: each tile's step (log2) and its A3
    quantization error."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    with np.errstate(divide="ignore"):
        steps = np.where(t.scales > 0, np.log2(t.scales), np.nan)
    for ax, data, label in ((axes[0], steps, "log2(step)"),
                            (axes[1], tile_errors(t), "A3 error")):
        im = ax.imshow(data, cmap="viridis", aspect="auto")
        ax.set_xlabel(f"tile column ({t.tile[1]} wide)")
        ax.set_ylabel(f"tile row ({t.tile[0]} high)")
        ax.set_title(f"{title}: {label}")
        fig.colorbar(im, ax=ax)
    return fig


def widths(per_layer, title="bit width per layer"):
    """A bar per layer: {layer: bits} (bits may be a float, an average)."""
    names = list(per_layer)
    fig, ax = plt.subplots(figsize=(max(4, 0.8 * len(names) + 2), 3.5),
                           constrained_layout=True)
    ax.bar(range(len(names)), [per_layer[n] for n in names], color="tab:blue")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel("bits")
    ax.set_ylim(0, 16.5)
    ax.set_title(title)
    return fig


def widths_over_time(epochs, title="widths during training"):
    """A line per layer over the epochs of a tq-train log (its "epochs"
    list, each with "widths": {layer: mean bits})."""
    fig, ax = plt.subplots(figsize=(6, 3.5), constrained_layout=True)
    layers = sorted({k for e in epochs for k in e.get("widths", {})})
    for layer in layers:
        ax.plot([e["epoch"] for e in epochs],
                [e.get("widths", {}).get(layer, np.nan) for e in epochs],
                marker="o", label=layer)
    ax.set_xlabel("epoch")
    ax.set_ylabel("bits")
    ax.set_title(title)
    if layers:
        ax.legend(fontsize="small")
    return fig
