"""Build the Cython extensions (the codec, the producer's delivery handle); fall back to pure
Python when asked or when no compiler works.

`KRAFKA_NO_EXTENSIONS=1` skips the extensions entirely. A failed compile is reported and the
package installs without them: every compiled module has a pure-Python twin with the same API.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
NO_EXTENSIONS = os.environ.get("KRAFKA_NO_EXTENSIONS", "") not in ("", "0")


class OptionalBuildExt(build_ext):
    """Turn a compiler failure into a warning: the pure-Python twins take over."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any toolchain failure means "no extensions"
            print(f"krafka: building extensions failed ({exc}); using pure Python", file=sys.stderr)

    def build_extension(self, ext):  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"krafka: extension {ext.name} failed ({exc}); using pure Python", file=sys.stderr)


def extensions() -> list:  # type: ignore[type-arg]
    if NO_EXTENSIONS:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("krafka: Cython not available; using pure Python", file=sys.stderr)
        return []
    from setuptools import Extension

    sources = sorted(
        [*HERE.glob("krafka/_codec/*.pyx"), *HERE.glob("krafka/io/*.pyx"), *HERE.glob("krafka/sync/*.pyx"),
         *HERE.glob("krafka/sansio/producer/*.pyx")]
    )
    exts = [
        Extension(
            str(p.relative_to(HERE).with_suffix("")).replace(os.sep, "."),
            [str(p.relative_to(HERE))],
            extra_compile_args=["-O3"],
        )
        for p in sources
    ]
    try:
        return cythonize(
            exts,
            language_level=3,
            compiler_directives={
                "boundscheck": False,
                "wraparound": False,
                "cdivision": True,
                "initializedcheck": False,
                "embedsignature": True,
            },
            quiet=True,
        )
    except Exception as exc:  # noqa: BLE001 - a Cython failure means "no extensions"
        print(f"krafka: cythonize failed ({exc}); using pure Python", file=sys.stderr)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
