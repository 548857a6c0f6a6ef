"""Run tq programs on the CPU backend from Python, through tq-run.

    cpu = Runner(tq_run)
    c, = cpu.run(mlir_text, [x, w], target="avx2", threads=2)

A `!tq.tiled` argument or result is two arrays, its data then its steps
(`tq-run --print-signature`). Work files live in a private directory; a
failing tq-run raises `ToolError` with its stderr.
"""
import json
import re

import numpy as np

from tq.ppu import Flow, ToolError  # noqa: F401  (ToolError re-exported)

ALL_TARGETS = ("avx512", "avxvnni", "avx2", "generic")


def host_targets(tq_run):
    """The SIMD paths of ALL_TARGETS that this host can run, as tq-run
    decides it (it refuses a target the CPU lacks): a test runs each of
    them and names the others in its output."""
    flow = Flow()
    program = flow.write("empty.mlir", "func.func @main() { return }\n")
    ok = []
    for target in ALL_TARGETS:
        try:
            flow.run(tq_run, program, f"--target={target}")
            ok.append(target)
        except ToolError as e:
            if "this host cannot run" not in str(e):
                raise
    return tuple(ok)


def report_targets(targets):
    """One line naming the targets a test ran and those it skipped."""
    skipped = [t for t in ALL_TARGETS if t not in targets]
    print(f"targets: {' '.join(targets)}; not on this host: "
          f"{' '.join(skipped) or 'none'}")


def bits_differ(got, want):
    """Where two f32 arrays hold different bits, any NaN matching any NaN."""
    return (got.view(np.uint32) != want.view(np.uint32)) & \
        ~(np.isnan(got) & np.isnan(want))


class Runner:
    def __init__(self, tq_run, workdir=None):
        self.tool = tq_run
        self.flow = Flow(workdir=workdir)
        self.count = 0

    def _call(self, mlir, inputs, options, outputs):
        """Runs tq-run on `mlir` with `options`; returns its stdout and the
        `outputs` result arrays."""
        self.count += 1
        args = [self.flow.write(f"p{self.count}.mlir", mlir), *options]
        for i, a in enumerate(inputs):
            p = self.flow.path(f"in{self.count}-{i}.npy")
            np.save(p, a)
            args.append(f"--input={p}")
        outs = [self.flow.path(f"out{self.count}-{i}.npy") for i in range(outputs)]
        args += [f"--output={p}" for p in outs]
        stdout = self.flow.run(self.tool, *args)
        return stdout, [np.load(p) for p in outs]

    def run(self, mlir, inputs, target="native", threads=1, entry="main",
            outputs=1):
        """Compiles `mlir` (text) and calls `entry` on `inputs` (arrays, in
        order; scalars as 0-d arrays). Returns the `outputs` result arrays."""
        return self._call(mlir, inputs, [f"--target={target}", f"--num-threads={threads}",
                                         f"--entry={entry}"], outputs)[1]

    def run_ppu(self, mlir, inputs, machine="", entry="main", outputs=1):
        """Runs `mlir` with `tq-run --target=ppu`: its tq ops on the PPU
        simulator (for `machine`, tq-to-ppu options), the rest on this host.
        Returns the result arrays and the simulator's statistics (a dict,
        summed over the kernel launches)."""
        options = ["--target=ppu", f"--entry={entry}", "--ppu-report=json"]
        if machine:
            options.append(f"--machine={machine}")
        report, results = self._call(mlir, inputs, options, outputs)
        return results, json.loads(report)

    def time(self, mlir, inputs, repeat=20, target="native", threads=1, entry="main",
             outputs=1):
        """Median wall time of `repeat` calls of `entry` on `inputs`, in ms
        (tq-run --repeat; compilation not included)."""
        out, _ = self._call(mlir, inputs, [f"--target={target}", f"--num-threads={threads}",
                                           f"--entry={entry}", f"--repeat={repeat}"],
                            outputs)
        return float(re.search(r"median ([0-9.]+) ms", out).group(1))
