"""pip install --no-build-isolation .  -- the fork's Python package faiss.

FAISS 1.7.3 from Debian's source package with faiss-ccd's patches and the
CCD pool inside, built by this repository's CMake (cmake/FaissFork.cmake),
the same recipe the tests use, for the interpreter running pip (it needs
numpy and setuptools there: the project's .venv has them, from
requirements/venv.txt). Offline but for apt's archive (the source package,
see scripts/faiss_source.sh); the system packages it needs come from
scripts/install_deps.sh. FAISS_CCD_JOBS sets the build's parallelism. The
result is the package faiss (with faiss.ccd and faiss.contrib), as FAISS's
own setup.py lays it out: the AVX2 module is loaded where the CPU has AVX2,
the generic one elsewhere.

The fork provides the module `faiss`, as the faiss-cpu and faiss-gpu
wheels do; pip cannot know that their files would overwrite each other,
so the build refuses to start in an environment that has one of them,
naming it (uninstall it first).
"""

import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent


# Other distributions of the module faiss (PyPI's names).
OTHER_FAISS = ("faiss-cpu", "faiss-gpu", "faiss-gpu-cu11", "faiss-gpu-cu12",
               "faiss-gpu-cuvs", "faiss-cpu-noavx2")


def refuse_other_faiss():
    """Stop with a clear error where another distribution already
    installed the module faiss into the environment pip installs into."""
    from importlib import metadata
    for name in OTHER_FAISS:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        sys.exit(f"faiss-ccd: {name} {version} is installed in "
                 f"{sys.prefix} and provides the module faiss too; the two "
                 f"would overwrite each other's files. Run `pip uninstall "
                 f"{name}` first, then install faiss-ccd's fork.")


class CMakeBuildPy(build_py):
    """Build the module with CMake, then copy the assembled package."""

    def run(self):
        refuse_other_faiss()
        build_dir = pathlib.Path(self.build_lib).resolve().parent / "cmake"
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
        ], check=True)
        subprocess.run([
            "cmake", "--build", str(build_dir), "-j", jobs,
            "--target", "faiss_python",
        ], check=True)
        target = pathlib.Path(self.build_lib) / "faiss"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(build_dir / "python" / "faiss", target)


class BinaryDistribution(Distribution):
    """The package holds compiled modules: a platform wheel, not 'any';
    and build_py, which makes it, runs although no source package is
    declared."""

    def has_ext_modules(self):
        return True

    def has_pure_modules(self):
        return True


setup(
    name="faiss",
    version="1.7.3+ccd",
    description="FAISS 1.7.3 with a CCD-aware work-stealing pool "
                "(faiss-ccd's fork)",
    # No source package to find: build_py makes faiss/ in build_lib.
    packages=[],
    cmdclass={"build_py": CMakeBuildPy},
    distclass=BinaryDistribution,
    install_requires=["numpy"],
    python_requires=">=3.9",
    zip_safe=False,
)
