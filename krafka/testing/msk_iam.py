"""Amazon's `aws-msk-iam-auth` (the Java library MSK clients log in with) as an oracle: the
AWS_MSK_IAM client message it builds for a host and credentials, to compare krafka's with.

    payload = java_msk_iam_payload("b-1.c.kafka.us-east-1.amazonaws.com", "AKID", "secret",
                                   user_agent="krafka-test")

Its jars come from Maven Central once (`aws-msk-iam-auth.pom.xml` beside this module, into the
krafka cache); the helper `java/MskIamPayload.java` is compiled against them once. It signs at
the clock's time: read `x-amz-date` (and `x-amz-expires`) back from the payload to sign the
same request elsewhere.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Final

from krafka.testing.runtime import KafkaUnavailable, compile_java, maven_jars, require_tool

#: The aws-msk-iam-auth release compared with.
MSK_IAM_AUTH_VERSION: Final = "2.2.0"
_POM: Final = Path(__file__).with_name("aws-msk-iam-auth.pom.xml")
SOURCE: Final = Path(__file__).with_name("java") / "MskIamPayload.java"
_MAIN: Final = "software.amazon.msk.auth.iam.internals.MskIamPayload"


def msk_iam_jars(version: str = MSK_IAM_AUTH_VERSION) -> Path:
    return maven_jars(
        _POM, f"aws-msk-iam-auth-{version}", {"msk.iam.version": version}, "aws-msk-iam-auth-*.jar"
    )


def java_msk_iam_payload(
    host: str,
    access_key: str,
    secret_key: str,
    *,
    user_agent: str,
    session_token: str | None = None,
    version: str = MSK_IAM_AUTH_VERSION,
) -> bytes:
    """The library's payload for `host` (its region taken from the host name)."""
    jars = msk_iam_jars(version)
    classes = compile_java(SOURCE, jars=jars)
    java = require_tool("java", "run aws-msk-iam-auth")
    args = [host, access_key, secret_key, user_agent]
    if session_token is not None:
        args.append(session_token)
    classpath = f"{classes}:{jars / '*'}"
    done = subprocess.run([java, "-cp", classpath, _MAIN, *args], capture_output=True, timeout=120)
    if done.returncode != 0 or not done.stdout.startswith(b"{"):
        raise KafkaUnavailable(f"MskIamPayload failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


__all__ = ["MSK_IAM_AUTH_VERSION", "java_msk_iam_payload", "msk_iam_jars"]
