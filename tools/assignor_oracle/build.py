"""Build the Java assignor oracle against the real `kafka-clients` jar (development tool).

`Oracle.java` runs Apache Kafka's own RangeAssignor, RoundRobinAssignor, StickyAssignor and
CooperativeStickyAssignor on scenarios read from stdin. It is compiled with
`krafka.testing.runtime.compile_java` against Apache Kafka's jars (resolved once from Maven Central
into the user cache, compiled classes cached by source hash), so no Kafka checkout is needed.
`golden.py` uses it to record the results krafka's assignors are tested against, and
`tests/sansio/group/classic/assignors/test_java_oracle.py` to check krafka on fresh scenarios.

    python tools/assignor_oracle/build.py [KAFKA_VERSION]    # prints the oracle's command line

Needs a JDK (java, javac) and, the first time, Maven (mvn) to fetch the jars.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from krafka.testing.runtime import (
    KAFKA_VERSION,
    classpath_argument,
    compile_java,
    require_tool,
)

SOURCE = Path(__file__).resolve().with_name("Oracle.java")


def build(version: str = KAFKA_VERSION) -> Path:
    """The oracle's class directory, compiled against kafka-clients `version` (cached)."""
    return compile_java(SOURCE, version)


def command(classes: Path, version: str = KAFKA_VERSION) -> list[str]:
    java = require_tool("java", "run the assignor oracle")
    classpath = f"{classes}:{classpath_argument(version)}"
    return [java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath, "Oracle"]


if __name__ == "__main__":
    version = sys.argv[1] if len(sys.argv) > 1 else KAFKA_VERSION
    print(" ".join(command(build(version), version)))
