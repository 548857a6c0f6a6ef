"""ONNX conformance: the node tests of Debian's libonnx-testdata through
tq-import-onnx and the CPU backend (f32), compared with their expected
outputs.

    /usr/bin/python3 -m tq.conformance BUILD_DIR [--report FILE] [--jobs N]

Each test is one of:
- pass: imported, compiled, run, every output within tolerance
  (|got - want| <= atol + rtol·|want|, rtol = atol = 1e-4; NaN where NaN);
  integer inputs (indices, shapes, zero points), and float inputs the
  importer needs constant (scales, Clip bounds), are bound as constants
  with `tq-import-onnx --constant-input`; the summary counts those tests;
- fail: imported but wrong or missing an output, the compiled code
  failed, or the runner itself raised;
- unsupported: the importer rejected the model (its reason is listed), or
  the graph takes or returns something other than tensors.
The report lists every test; the last line is the summary.
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
RTOL = ATOL = 1e-4


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(t)


def run_test(test_dir, bindir, work):
    """A test whose graph takes or returns something other than a tensor
    (a sequence, a map, an optional) is unsupported; any other exception
    is a failure, like a wrong or missing output."""
    name = os.path.basename(test_dir)
    try:
        graph = onnx.load(os.path.join(test_dir, "model.onnx")).graph
        if any(not v.type.HasField("tensor_type")
               for v in list(graph.input) + list(graph.output)):
            return name, "unsupported", "non-tensor inputs or outputs"
        return check_test(test_dir, bindir, work)
    except Exception as e:
        return name, "fail", f"runner: {type(e).__name__}: {e}"


def unsupported_reason(stderr):
    """The importer's first error line without the path and the node's
    name; for the list of unsupported op types, the op types."""
    lines = stderr.strip().splitlines() or ["?"]
    reason = lines[0].split("model.onnx: ", 1)[-1]
    reason = re.sub(r"^node '[^']*' ", "", reason)
    ops = [m.group(1) for m in (re.match(r"  (\S+): \d+ nodes?, first", l)
                                 for l in lines[1:]) if m]
    if ops:
        reason += " " + ", ".join(ops)
    return reason


def check_test(test_dir, bindir, work):
    name = os.path.basename(test_dir)
    data = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    if not data:
        return name, "unsupported", "no test data"
    inputs = [load_tensor(p) for p in sorted(glob.glob(os.path.join(data[0], "input_*.pb")),
                                             key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
    outputs = [load_tensor(p) for p in sorted(glob.glob(os.path.join(data[0], "output_*.pb")),
                                              key=lambda p: int(p.rsplit("_", 1)[1][:-3]))]
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    init = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    # Inputs are arguments: float, and int64, int32, int16, int8 and bool
    # as integer arguments. An input of another type, or one the importer
    # needs constant (a shape, axes, a scale, a zero point), is bound as a
    # constant (--constant-input).
    runtime = (np.float32, np.int64, np.int32, np.int16, np.int8, np.bool_)
    constant = {n for n, a in zip(names, inputs) if a.dtype.type not in runtime}
    while True:
        args = [os.path.join(bindir, "tq-import-onnx"), os.path.join(test_dir, "model.onnx"),
                "-o", os.path.join(work, name + ".mlir")]
        for i, (n, a) in enumerate(zip(names, inputs)):
            if n in constant:
                path = os.path.join(work, f"{name}.const{i}.npy")
                np.save(path, a if a.dtype != np.uint64 else a.astype(np.int64))
                args.append(f"--constant-input={n}={path}")
            elif a.ndim > 0:
                args.append(f"--input-shape={n}:" + "x".join(map(str, a.shape)))
        p = subprocess.run(args, capture_output=True, text=True, errors="replace")
        needed = re.search(r"input \d+ \('([^']*)'\) must be a constant", p.stderr)
        if p.returncode == 0 or not needed or needed.group(1) in constant \
                or needed.group(1) not in names:
            break
        constant.add(needed.group(1))
    if p.returncode != 0:
        return name, "unsupported", unsupported_reason(p.stderr)
    run = [os.path.join(bindir, "tq-run"), os.path.join(work, name + ".mlir")]
    for i, (n, a) in enumerate(zip(names, inputs)):
        if n in constant:
            continue
        path = os.path.join(work, f"{name}.in{i}.npy")
        np.save(path, a)
        run.append(f"--input={path}")
    outs = [os.path.join(work, f"{name}.out{i}.npy") for i in range(len(outputs))]
    run += [f"--output={o}" for o in outs]
    p = subprocess.run(run, capture_output=True, text=True, errors="replace")
    if p.returncode != 0:
        return name, "fail", "tq-run: " + (p.stderr.strip().splitlines() or ["?"])[0]
    for i, (o, want) in enumerate(zip(outs, outputs)):
        if not os.path.exists(o):
            return name, "fail", f"output {i}: not written"
        got = np.load(o)
        if got.shape != want.shape:
            return name, "fail", f"output {i}: shape {got.shape}, want {want.shape}"
        if not np.allclose(got, want.astype(got.dtype), rtol=RTOL, atol=ATOL,
                           equal_nan=True):
            err = np.abs(got.astype(np.float64) - want).max()
            return name, "fail", f"output {i}: max abs error {err:.3g}"
    if constant:
        bound = ", ".join(sorted(constant))
        if len(constant) == len(names):
            return name, "pass", f"(every input bound as a constant: {bound})"
        return name, "pass", f"(inputs bound as constants: {bound})"
    return name, "pass", ''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--report", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--filter", default="")
    ap.add_argument("--markdown", action="store_true",
                    help="print the summary and the most common reasons a test is "
                         "unsupported, for docs/ONNX.md (scripts/update-docs.sh)")
    a = ap.parse_args()
    bindir = os.path.join(a.build, "bin")
    tests = sorted(d for d in glob.glob(os.path.join(DATA, "test_*"))
                   if a.filter in os.path.basename(d))
    work = tempfile.mkdtemp(prefix="tq-conformance-")
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(lambda d: run_test(d, bindir, work), tests))
    counts = collections.Counter(status for _, status, _ in results)
    lines = [f"{status:12s} {name}  {why}".rstrip() for name, status, why in results]
    reasons = collections.Counter(why for _, s, why in results if s == "unsupported")
    lines.append("")
    lines.append("unsupported, by reason:")
    lines += [f"  {n:4d}  {why}" for why, n in reasons.most_common()]
    folded = sum(1 for _, s, why in results if s == "pass" and "every input" in why)
    bound = sum(1 for _, s, why in results if s == "pass" and why)
    summary = (f"ONNX conformance: {len(results)} node tests, "
               f"{counts['pass'] + counts['fail']} supported, {counts['pass']} passed "
               f"({bound} with integer or parameter inputs bound as constants, "
               f"{folded} of them with no input left), "
               f"{counts['fail']} failed, {counts['unsupported']} unsupported")
    lines.append(summary)
    text = "\n".join(lines) + "\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    if a.markdown:
        print(f"{summary}\n\nThe most common reasons a test is unsupported:\n")
        for why, n in reasons.most_common(8):
            print(f"- {n}: {why}")
        return
    for line in lines:
        if not line.startswith("unsupported "):
            print(line)


if __name__ == "__main__":
    main()
