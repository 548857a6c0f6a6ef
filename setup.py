"""pip install . : the tq Python package with its compiled module.

Build the project first (scripts/build.sh); this copies python/tq and
build/python/_tq_native*.so (TQ_BUILD_DIR for another build directory) into
the environment. The module finds the build's libraries (libTQCAPI.so)
through its run path, so keep the build directory. No index is needed: in a
venv made with --system-site-packages, Debian's setuptools builds the wheel
and Debian's numpy, onnx and matplotlib are used:

    /usr/bin/python3 -m venv --system-site-packages venv
    venv/bin/pip install .
"""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("TQ_BUILD_DIR", os.path.join(ROOT, "build"))
os.makedirs(os.path.join(BUILD, "pip"), exist_ok=True)


class BuildWithNative(build_py):
    """build_py, plus the compiled module _tq_native from the build."""

    def run(self):
        super().run()
        native = glob.glob(os.path.join(BUILD, "python", "_tq_native*.so"))
        if not native:
            raise SystemExit(f"setup.py: error: no _tq_native module in {BUILD}/python: "
                             "build the project first (scripts/build.sh)")
        for path in native:
            shutil.copy(path, self.build_lib)
        # Where tq.train finds the build's tools.
        with open(os.path.join(self.build_lib, "tq", "_build_info.py"), "w") as f:
            f.write(f"BIN_DIR = {os.path.join(BUILD, 'bin')!r}\n")


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        for line in f:
            if line.startswith("project(tile-quant VERSION"):
                return line.split()[2]
    return "0"


setup(
    name="tile-quant",
    version=version(),
    description="tile-quant: a quantizing neural-network compiler (Python API)",
    package_dir={"": "python"},
    packages=["tq", "tq.models"],
    cmdclass={"build_py": BuildWithNative},
    # Out of CMake's build/lib and the source tree.
    options={"build": {"build_base": os.path.join(BUILD, "pip")},
             "egg_info": {"egg_base": os.path.join(BUILD, "pip")}},
    zip_safe=False,
)
