"""onnxruntime (npm onnxruntime-node), the peer tile-quant is measured
against, from Python through scripts/ort-run.js.

    ort = ORT(node_modules)            # e.g. build/ort/node_modules
    outputs, ms = ort.run("model.onnx", {"x": array}, repeat=100)
    many = ort.run_many("model.onnx", [{"x": a0}, {"x": a1}])

`outputs` maps each output name to an array; `ms` is the median call time
(None without `repeat`). `run_many` runs one session on each set of feeds
and returns their outputs. Inputs may be float32, int64, int32 or bool.
"""
import json
import os
import subprocess
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DTYPES = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "bool": np.bool_}


class ORTError(Exception):
    pass


# The onnxruntime every comparison is made against, pinned.
VERSION = "1.30.0"
CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "build", "ort")


def install(cache=CACHE):
    """Installs onnxruntime-node VERSION under `cache` (by default the
    source tree's build/ort, shared by every build directory) once; the CPU
    binaries come with the package. Returns its node_modules directory."""
    modules = os.path.join(cache, "node_modules")
    package = os.path.join(modules, "onnxruntime-node", "package.json")
    installed = None
    if os.path.exists(package):
        with open(package) as f:
            installed = json.load(f).get("version")
    if installed != VERSION:
        os.makedirs(cache, exist_ok=True)
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent",
                        f"onnxruntime-node@{VERSION}"], cwd=cache, env=env, check=True)
    return modules


class ORT:
    def __init__(self, node_modules, workdir=None):
        self.env = dict(os.environ, NODE_PATH=node_modules)
        self.dir = workdir or tempfile.mkdtemp(prefix="tq-ort-")
        self.count = 0

    def run(self, model, feeds, repeat=0, threads=1):
        outputs, ms = self._session(model, [feeds], repeat, threads)
        return outputs[0], ms

    def run_many(self, model, feeds_list, threads=1):
        return self._session(model, feeds_list, 0, threads)[0]

    def _session(self, model, feeds_list, repeat, threads):
        self.count += 1
        work = os.path.join(self.dir, str(self.count))
        os.makedirs(work, exist_ok=True)
        runs = []
        for r, feeds in enumerate(feeds_list):
            inputs = []
            for i, (name, value) in enumerate(feeds.items()):
                a = np.ascontiguousarray(value)
                dtype = next((k for k, t in DTYPES.items() if a.dtype == t), None)
                if dtype is None:
                    raise ORTError(f"input '{name}': unsupported dtype {a.dtype}")
                path = os.path.join(work, f"in{r}_{i}.bin")
                a.astype(a.dtype.newbyteorder("<")).tofile(path)
                inputs.append({"name": name, "dtype": dtype, "dims": list(a.shape),
                               "file": path})
            runs.append(inputs)
        spec = os.path.join(work, "spec.json")
        with open(spec, "w") as f:
            json.dump({"model": os.path.abspath(model), "runs": runs,
                       "outdir": work, "repeat": repeat, "threads": threads}, f)
        p = subprocess.run(["node", os.path.join(ROOT, "scripts", "ort-run.js"), spec],
                           capture_output=True, text=True, env=self.env)
        if p.returncode != 0:
            raise ORTError(p.stderr.strip())
        result = json.loads(p.stdout)
        outputs = []
        for r, run in enumerate(result["runs"]):
            out = {}
            for i, o in enumerate(run):
                a = np.fromfile(os.path.join(work, f"{r}_{i}.bin"), DTYPES[o["dtype"]])
                out[o["name"]] = a.reshape(o["dims"])
            outputs.append(out)
        return outputs, result["median_ms"]
