"""Optional dependencies, imported where first needed, with the extra that installs them:
`require("pyarrow", "decode_to_arrow")` is the module, or a `MissingDependencyError` saying
`pip install 'krafka[arrow]'`."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Final

from krafka.errors import MissingDependencyError

#: Top-level module -> (its PyPI name, the krafka extra that installs it).
EXTRAS: Final = {
    "pyarrow": ("pyarrow", "arrow"),
    "pyspark": ("pyspark", "spark"),
    "pandas": ("pandas", "spark"),
    "botocore": ("botocore", "aws"),
    "aws_msk_iam_sasl_signer": ("aws-msk-iam-sasl-signer-python", "aws"),
    "opentelemetry": ("opentelemetry-api", "otel"),
}


def require(module: str, feature: str) -> ModuleType:
    """`module` imported, or `MissingDependencyError` naming `feature` and the pip command that
    installs what is missing (a module missing inside it, not it, propagates unchanged)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        if exc.name is None or exc.name.partition(".")[0] != top or top not in EXTRAS:
            raise
        package, extra = EXTRAS[top]
        raise MissingDependencyError(
            f"{feature} needs {package}, which is not installed: pip install 'krafka[{extra}]'"
            + (_java_missing() if extra == "spark" else ""),
            name=top,
        ) from exc


def _java_missing() -> str:
    """What pip cannot install for Spark, when it is missing too: Java."""
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") or (home and Path(home, "bin", "java").exists()):
        return ""
    return "; Spark also runs on Java 17+, not found here (install a JDK, or set JAVA_HOME)"
