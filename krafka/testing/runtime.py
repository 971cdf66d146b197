"""The Apache Kafka runtime: its jars from Maven Central, resolved once into a user cache, and
Java programs compiled against them.

`kafka_classpath()` runs `mvn dependency:copy-dependencies` on the pom shipped beside this module
the first time and only reads the cache afterwards (no network); `maven_jars()` does the same
for another pom (Amazon's MSK IAM library, `krafka.testing.msk_iam`). `compile_java(source)`
compiles a helper with `javac` against the same jars, once per source text. Both fail with
`KafkaUnavailable` naming what is missing (`java`, `javac`, `mvn`, or the download itself).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final

from krafka.errors import KrafkaError

#: The Apache Kafka release the runtime pom resolves (broker, tools and Java client alike).
KAFKA_VERSION: Final = "4.4.0"
_POM: Final = Path(__file__).with_name("kafka-runtime.pom.xml")
_COMPLETE: Final = ".complete"


class KafkaUnavailable(KrafkaError):
    """Apache Kafka cannot be run here: a tool is missing or the jars did not resolve."""


def cache_root() -> Path:
    """`$KRAFKA_CACHE_DIR`, else `$XDG_CACHE_HOME/krafka`, else `~/.cache/krafka`."""
    explicit = os.environ.get("KRAFKA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "krafka"


def require_tool(name: str, purpose: str) -> str:
    """The path of `name` on PATH (or under `$JAVA_HOME/bin` for the JDK's tools)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and name in ("java", "javac"):
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise KafkaUnavailable(
            f"{name!r} is not installed (needed to {purpose}); install Java 17+ and Maven "
            "(Debian: apt install openjdk-17-jdk-headless maven)"
        )
    return found


def kafka_classpath(version: str = KAFKA_VERSION) -> Path:
    """The directory holding every runtime jar of Apache Kafka `version` (resolved on first use)."""
    return maven_jars(_POM, f"kafka-{version}", {"kafka.version": version}, "kafka_2.13-*.jar")


def maven_jars(pom: Path, name: str, properties: dict[str, str], expected: str) -> Path:
    """`cache_root()/NAME/jars`: the runtime dependencies of `pom` (its `${key}`s replaced by
    `properties`), copied there by Maven on first use; `expected` is a glob one of them must
    match."""
    target = cache_root() / name / "jars"
    if (target / _COMPLETE).is_file():
        return target
    mvn = require_tool("mvn", f"download {name} from Maven Central")
    require_tool("java", f"run {name}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix="resolving-") as tmp:
        staging = Path(tmp) / "jars"
        text = pom.read_text()
        for key, value in properties.items():
            text = text.replace("${" + key + "}", value)
        resolved = Path(tmp) / "pom.xml"
        resolved.write_text(text)
        command = [
            mvn, "-q", "-B", "-f", str(resolved), "dependency:copy-dependencies",
            f"-DoutputDirectory={staging}", "-DincludeScope=runtime",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not any(staging.glob(expected)):
            tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
            raise KafkaUnavailable(
                f"resolving {name} from Maven Central failed "
                f"(mvn exit {done.returncode}):\n" + "\n".join(tail)
            )
        (staging / _COMPLETE).write_text(name)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    return target


def classpath_argument(version: str = KAFKA_VERSION) -> str:
    """A `-cp` value naming every jar of the runtime."""
    return str(kafka_classpath(version) / "*")


def compile_java(source: Path, version: str = KAFKA_VERSION, *, jars: Path | None = None) -> Path:
    """Compile one Java source file against Kafka's jars (or the `jars` directory); returns the
    class directory.

    The output is cached by the source's hash, so a second call is free."""
    text = source.read_bytes()
    against = str(jars) if jars is not None else version
    digest = hashlib.sha256(text + against.encode()).hexdigest()[:16]
    out = cache_root() / "java" / f"{source.stem}-{digest}"
    if (out / _COMPLETE).is_file():
        return out
    javac = require_tool("javac", f"compile {source.name}")
    classpath = str(jars / "*") if jars is not None else classpath_argument(version)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix="compiling-") as tmp:
        staging = Path(tmp) / "classes"
        staging.mkdir()
        command = [javac, "-nowarn", "-cp", classpath, "-d", str(staging), str(source)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise KafkaUnavailable(f"javac {source.name} failed:\n{done.stderr.strip()}")
        (staging / _COMPLETE).write_text(digest)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    return out
