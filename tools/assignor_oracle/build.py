"""Build the Java assignor oracle from an apache/kafka git repository (development tool).

Compiles Kafka's own RangeAssignor, RoundRobinAssignor, StickyAssignor and
CooperativeStickyAssignor (with the few classes they need, and tiny stand-ins in `stubs/` for
what they only touch in passing) plus `Oracle.java`, which runs them on scenarios from stdin.
`golden.py` uses it to record the results krafka's assignors are tested against.

    python tools/assignor_oracle/build.py KAFKA_GIT_DIR [COMMIT] [OUT_DIR]

Needs a JDK (javac) and slf4j-api (found under ~/.m2, or pass SLF4J_JAR=...).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAIN = "clients/src/main/java/org/apache/kafka/"
SOURCES = [
    "clients/consumer/ConsumerPartitionAssignor.java",
    "clients/consumer/StickyAssignor.java",
    "clients/consumer/CooperativeStickyAssignor.java",
    "clients/consumer/RangeAssignor.java",
    "clients/consumer/RoundRobinAssignor.java",
    "clients/consumer/ConsumerGroupMetadata.java",
    "clients/consumer/internals/AbstractStickyAssignor.java",
    "clients/consumer/internals/AbstractPartitionAssignor.java",
    "clients/consumer/internals/Utils.java",
    "common/Cluster.java",
    "common/ClusterResource.java",
    "common/Configurable.java",
    "common/KafkaException.java",
    "common/Node.java",
    "common/PartitionInfo.java",
    "common/TopicIdPartition.java",
    "common/TopicPartition.java",
    "common/Uuid.java",
    "common/utils/CircularIterator.java",
    "common/utils/CollectionUtils.java",
    "common/utils/ByteUtils.java",
]
TYPES_DIR = "common/protocol/types/"
STUBS = {
    "Utils.java": "common/utils/",
    "BaseRecords.java": "common/record/",
    "MemoryRecords.java": "common/record/",
    "JoinGroupRequest.java": "common/requests/",
    "Writable.java": "common/protocol/",
    "MessageUtil.java": "common/protocol/",
}


def slf4j_jar() -> str:
    jar = os.environ.get("SLF4J_JAR")
    if jar:
        return jar
    found = sorted(glob.glob(os.path.expanduser("~/.m2/repository/org/slf4j/slf4j-api/*/*.jar")))
    if not found:
        sys.exit("slf4j-api jar not found: set SLF4J_JAR")
    return found[0]


def git_show(repo: str, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo, "show", f"{commit}:{path}"], check=True, capture_output=True
    ).stdout


def build(repo: str, commit: str, out: Path) -> Path:
    src = out / "src"
    shutil.rmtree(out, ignore_errors=True)
    names = subprocess.run(
        ["git", "--git-dir", repo, "ls-tree", "--name-only", commit, MAIN + TYPES_DIR],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for path in SOURCES + [n[len(MAIN) :] for n in names]:
        target = src / "org/apache/kafka" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git_show(repo, commit, MAIN + path))
    for stub, package in STUBS.items():
        target = src / "org/apache/kafka" / package / stub
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(HERE / "stubs" / stub, target)
    classes = out / "classes"
    classes.mkdir(parents=True)
    subprocess.run(
        ["javac", "-nowarn", "-d", str(classes), "-cp", slf4j_jar(), "-sourcepath", str(src)]
        + [str(HERE / "Oracle.java")],
        check=True,
    )
    return classes


def command(classes: Path) -> list[str]:
    return ["java", "-cp", f"{classes}{os.pathsep}{slf4j_jar()}", "Oracle"]


if __name__ == "__main__":
    repo = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    out = Path(sys.argv[3] if len(sys.argv) > 3 else "/tmp/krafka-assignor-oracle")
    print(" ".join(command(build(repo, commit, out))))
