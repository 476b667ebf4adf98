"""pip install --no-build-isolation .  -- the Python module faiss_ccd.

The extension is built by this repository's CMake (python/CMakeLists.txt),
the same recipe the tests use, for the interpreter running pip: it must see
Debian's python3-faiss and python3-numpy (/usr/bin/python3, or a venv made
with --system-site-packages). Offline: needs only Debian's packages
(scripts/install_deps.sh). FAISS_CCD_JOBS sets the build's parallelism.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configure and build only the Python module's targets, then copy the
    extension and its SWIG proxy into the package."""

    def build_extension(self, ext):
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        jobs = os.environ.get("FAISS_CCD_JOBS", str(os.cpu_count() or 1))
        subprocess.run([
            "cmake", "-S", str(ROOT), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DFAISS_CCD_BUILD_TESTS=OFF",
            "-DFAISS_CCD_BUILD_BENCHS=OFF",
            "-DFAISS_CCD_BUILD_C_API=OFF",
            "-DFAISS_CCD_ENABLE_PYTHON=ON",
            f"-DFAISS_CCD_PYTHON={sys.executable}",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ], check=True)
        subprocess.run([
            "cmake", "--build", str(build_dir), "-j", jobs,
            "--target", "faiss_ccd_python",
        ], check=True)
        built = build_dir / "python" / "faiss_ccd"
        target = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        extension = next(built.glob("_swigfaiss_ccd*.so"))
        shutil.copyfile(extension, target)
        shutil.copyfile(built / "swigfaiss_ccd.py",
                        target.parent / "swigfaiss_ccd.py")


setup(
    name="faiss_ccd",
    version="0.1.0",
    description="CCD-aware work-stealing parallel backend for FAISS",
    packages=["faiss_ccd"],
    package_dir={"faiss_ccd": "python/faiss_ccd"},
    ext_modules=[CMakeExtension("faiss_ccd._swigfaiss_ccd")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
