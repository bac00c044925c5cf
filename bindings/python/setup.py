"""Bundles libshapepoly.so into the package when it is available at build time.

`pip install bindings/python` (after `make lib`) and `make python-wheel` copy the library
(SHAPEPOLY_LIB, else <repo>/build/lib/libshapepoly.so) next to the package, where the loader
looks second. Without it the package still installs and finds the library at run time through
SHAPEPOLY_LIB or the repository's build/lib.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def library() -> str:
    env = os.environ.get("SHAPEPOLY_LIB")
    if env and os.path.exists(env):
        return env
    path = os.path.join(HERE, "..", "..", "build", "lib", "libshapepoly.so")
    return path if os.path.exists(path) else ""


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        lib = library()
        if lib:
            dest = os.path.join(self.build_lib, "shapepoly", "libshapepoly.so")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(lib, dest)


class BinaryDistribution(Distribution):
    """A wheel that bundles the .so is platform-specific."""

    def has_ext_modules(self) -> bool:
        return bool(library())


cmdclass = {"build_py": BuildPy}
try:  # setuptools >= 70.1, else the wheel package (present wherever wheels are built)
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None
if bdist_wheel is not None:

    class BdistWheel(bdist_wheel):
        """The package is pure Python plus a C library: any Python 3, this platform only."""

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
