"""setuptools' build directories in a scratch directory of their own, removed
when the build ends, so that `pip install ./python` writes nothing into the
checkout (pyproject.toml holds the package's description)."""

import atexit
import shutil
import tempfile

from setuptools import setup

scratch = tempfile.mkdtemp(prefix="capsim-python-build-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)
setup(options={"build": {"build_base": scratch}, "egg_info": {"egg_base": scratch}})
