"""Drive the PPU flow from Python: tq-opt, tq-translate and tq-ppu-sim.

    flow = Flow(opt, translate, sim)
    q = flow.opt(src, "-tq-quantize=tile=8")           # any tq-opt passes
    program = flow.to_ppu(q, "v=8")                     # binary stream path
    (y,), stats = flow.simulate(program, {"arg0": x}, report="json")

Inputs are saved as `.npy` in a private work directory; a failing tool raises
`ToolError` carrying its stderr.
"""
import json
import os
import subprocess
import tempfile

import numpy as np


class ToolError(RuntimeError):
    pass


class Flow:
    def __init__(self, opt=None, translate=None, sim=None, workdir=None):
        self.tools = {"opt": opt, "translate": translate, "sim": sim}
        self.dir = workdir or tempfile.mkdtemp(prefix="tq-ppu-")
        self.listing = None  # the last PPU dialect program to_ppu produced

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        """Writes `text` to a work file and returns its path."""
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def run(self, tool, *args):
        """Runs `tool` ("opt", "translate", "sim" or a path); returns stdout."""
        tool = self.tools.get(tool, tool)
        if tool is None:
            raise ToolError("no path given for this tool")
        proc = subprocess.run([tool, *map(str, args)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolError(f"{os.path.basename(tool)} failed:\n{proc.stderr}")
        return proc.stdout

    def opt(self, src, *passes, out="q.mlir"):
        """Runs tq-opt on the file `src`; returns the output path."""
        q = self.path(out)
        self.run("opt", src, *passes, "-o", q)
        return q

    def to_ppu(self, src, options="", out="program.bin"):
        """Lowers a tq program with `-tq-to-ppu=<options>` and encodes it;
        returns the binary stream path (the listing is kept in self.listing)."""
        self.listing = self.opt(src, f"-tq-to-ppu={options}", out="program.mlir")
        binary = self.path(out)
        self.run("translate", "--ppu-to-binary", self.listing, "-o", binary)
        return binary

    def simulate(self, program, inputs, outputs=("result0",), report="none"):
        """Runs `program` (binary or listing) with `inputs` ({name: array}).
        Returns ([output arrays], report): a dict for report="json", the
        simulator's text for "text", None for "none"."""
        args = [program]
        for name, array in inputs.items():
            p = self.path(f"in-{name}.npy")
            np.save(p, array)
            args.append(f"--input={name}={p}")
        for name in outputs:
            args.append(f"--output={name}={self.path(f'out-{name}.npy')}")
        stats_file = self.path("stats.json")
        if report == "json":
            args += ["--report=json", f"--report-file={stats_file}"]
        elif report == "none":
            args.append("--report=none")
        text = self.run("sim", *args)
        results = [np.load(self.path(f"out-{name}.npy")) for name in outputs]
        if report == "json":
            with open(stats_file) as f:
                return results, json.load(f)
        return results, (text if report == "text" else None)


def args_of(*arrays):
    """Positional function arguments as simulator inputs: arg0, arg1, ..."""
    return {f"arg{i}": a for i, a in enumerate(arrays)}
