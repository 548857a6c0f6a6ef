"""python3 -m tq report on the Fashion CNN: the HTML has every section, the
figures agree with what the API computes, and bad arguments are errors."""
import json
import subprocess
import sys

import numpy as np
import pytest

from tq.models import fashion


@pytest.fixture(scope="module")
def report(models, tmp_path_factory):
    work = tmp_path_factory.mktemp("report")
    x, y = fashion.load("t10k", 128)
    np.savez(work / "data.npz", image=x, y=y)
    r = subprocess.run([sys.executable, "-m", "tq", "report",
                        f"{models}/fashion_cnn.onnx", "--data", str(work / "data.npz"),
                        "-o", str(work / "r.html"), "--json", str(work / "r.json"),
                        "--figures", str(work / "figs")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return work, r.stderr


def test_sections(report):
    work, stderr = report
    text = (work / "r.html").read_text()
    for heading in ("Error per layer", "Bit widths", "per tile",
                    "PPU simulator", "Time per op kind"):
        assert heading in text
    assert text.count("data:image/png;base64,") == 2
    assert (work / "figs" / "tiles.png").stat().st_size > 1000
    assert "tq report: layer /3/Conv alone" in stderr  # progress


def test_figures(report):
    r = json.loads((report[0] / "r.json").read_text())
    assert r["samples"] == 128
    assert [l["layer"] for l in r["layers"]] == ["/3/Conv", "/7/Gemm", "/9/Gemm"]
    # One layer quantized perturbs the output less than all three.
    assert all(0 < l["output_error"] < r["relative_error"] for l in r["layers"])
    assert abs(r["accuracy_quantized"] - r["accuracy_float"]) <= 0.03
    assert r["accuracy_float"] >= 0.85
    assert r["ppu"]["same_bits_as_cpu"] and r["ppu"]["requantizations"] == 0
    assert set(r["widths"].values()) == {8}
    assert r["latency_ms"]["float"] > 0 and r["latency_ms"]["quantized"] > 0


@pytest.mark.parametrize("args, message", [
    (["--data", "absent.npz"], "no such file: absent.npz"),
    (["--data", "{work}/bad.npz"], "has no array 'image'"),
    (["--data", "{work}/data.npz", "--quantize", "tile=0"], "tile must be positive"),
    (["--data", "{work}/data.npz", "--limit", "0"], "--limit must be positive"),
])
def test_errors(report, models, args, message):
    work = report[0]
    np.savez(work / "bad.npz", pixels=np.zeros((2, 1, 28, 28), np.float32))
    r = subprocess.run([sys.executable, "-m", "tq", "report", f"{models}/fashion_cnn.onnx",
                        "-o", str(work / "e.html")] + [a.format(work=work) for a in args],
                       capture_output=True, text=True, cwd=work)
    assert r.returncode != 0
    assert message in r.stderr


def test_usage():
    r = subprocess.run([sys.executable, "-m", "tq"], capture_output=True, text=True)
    assert r.returncode == 2 and "report" in r.stdout
