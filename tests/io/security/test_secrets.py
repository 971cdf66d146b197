"""No password or token ever shows: not in a repr (of clients, configs, connections,
mechanisms, exceptions, or anything they reach), not in a DEBUG log line of any `krafka`
logger, not in an exception message or traceback, not in the CLI's output, whether the login
succeeds or is refused."""

from __future__ import annotations

import gc
import traceback
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from _security import krafka_debug_logs, run_cli, sasl, unique, write_properties

from krafka import Consumer, Producer, ScramUpsertion
from krafka.config import keywords_from_config
from krafka.errors import AuthenticationError, ProxyAuthenticationError
from krafka.io.admin import AdminClient
from krafka.io.oauth import UnsecuredJwtProvider
from krafka.sansio.sasl import OAuthBearerToken
from krafka.sansio.secret import Secret
from krafka.testing.kafka import KafkaCluster
from krafka.testing.socks5 import Socks5Server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


def reachable_text(*roots: object, depth: int = 8) -> Iterator[str]:
    """The repr of every object reachable from `roots` through krafka's own objects (their
    attributes, slots, containers, closures), and every string and bytes among them."""
    seen: set[int] = set()
    stack = [(root, 0) for root in roots]
    while stack:
        obj, level = stack.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType):
            continue
        seen.add(id(obj))
        if isinstance(obj, str | bytes | bytearray | memoryview):
            yield obj if isinstance(obj, str) else bytes(obj).decode("latin-1")
            continue
        try:
            yield repr(obj)
        except Exception as exc:  # a half-closed object: its repr may fail, never leak
            yield repr(exc)
        if level < depth:
            stack.extend((child, level + 1) for child in _children(obj))


def _children(obj: object) -> list[object]:
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, list | tuple | set | frozenset) or type(obj).__name__ == "deque":
        return list(obj)  # type: ignore[call-overload]
    if isinstance(obj, types.FunctionType | types.MethodType):
        function = getattr(obj, "__func__", obj)
        cells = [c.cell_contents for c in function.__closure__ or () if _filled(c)]
        return [*cells, getattr(obj, "__self__", None)]
    if isinstance(obj, Secret) or not type(obj).__module__.startswith("krafka"):
        return []  # a Secret is where a secret belongs: only its repr must not show it
    out = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(obj, name):
                out.append(getattr(obj, name))
    return out


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def leaks(secrets: list[str], texts: Iterator[str] | list[str]) -> list[str]:
    return [text[:200] for text in texts if any(secret in text for secret in secrets)]


async def login_options(kafka: KafkaCluster, mechanism: str) -> tuple[dict[str, Any], list[Secret]]:
    """Client keywords that log in with `mechanism`, and the secrets they carry."""
    if mechanism == "OAUTHBEARER":
        jwt = UnsecuredJwtProvider("alice", lifetime=60)
        issued: list[Secret] = []

        def provider() -> OAuthBearerToken:
            token = jwt()
            issued.append(token.value)
            return token

        options = {
            "bootstrap_servers": kafka.bootstrap_for("SASL_PLAINTEXT"),
            "sasl_mechanism": mechanism,
            "sasl_oauth_token_provider": provider,
        }
        return options, issued
    if mechanism == "PLAIN":
        return sasl(kafka, "alice", mechanism), [Secret(kafka.users["alice"])]
    user, password = unique("frank"), unique("Pa55-frank")
    async with AdminClient(**sasl(kafka, "admin")) as admin:
        made = [ScramUpsertion(user, mechanism, password)]
        (await admin.alter_user_scram_credentials(made)).raise_for_errors()
        with anyio.fail_after(10):  # until the broker has applied it
            while not isinstance(
                (await admin.describe_user_scram_credentials([user]))[user], tuple
            ):
                await anyio.sleep(0.02)
    return sasl(kafka, user, mechanism, password=Secret(password)), [Secret(password)]


def refused_options(options: dict[str, Any], mechanism: str) -> tuple[dict[str, Any], Secret]:
    wrong = Secret(unique("Wr0ng-secret"))
    if mechanism == "OAUTHBEARER":
        return {**options, "sasl_oauth_token_provider": lambda: OAuthBearerToken(wrong)}, wrong
    return {**options, "sasl_password": wrong}, wrong


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_no_secret_in_reprs_debug_logs_or_errors(kafka: KafkaCluster, mechanism: str) -> None:
    options, secrets = await login_options(kafka, mechanism)
    topic = unique("secrets")
    texts: list[str] = []
    with krafka_debug_logs() as logs:
        async with Producer(**options) as producer, Consumer(**options) as consumer:
            await producer.send_and_wait(topic, b"v")
            await consumer.assign([])
            texts += reachable_text(producer, consumer)
        bad, wrong = refused_options(options, mechanism)
        secrets.append(wrong)
        for client in (Producer, Consumer, AdminClient):
            with pytest.raises(AuthenticationError) as info:
                async with client(**bad):
                    pass
            texts += traceback.format_exception(info.value)
            texts += [repr(info.value), str(info.value), *reachable_text(info.value)]
    revealed = [secret.reveal() for secret in secrets]
    assert revealed and all(revealed)
    assert "authenticated to" in logs.text  # the DEBUG lines were there to look at
    assert "krafka.wire: recv Produce" in logs.text and "krafka.connection:" in logs.text
    assert not leaks(revealed, texts)
    assert not leaks(revealed, logs.lines)


async def test_no_socks5_proxy_credential_in_reprs_debug_logs_or_errors(
    kafka: KafkaCluster,
) -> None:
    """The user and password of `socks5_proxy` (keyword or `socks5.proxy` property) show
    nowhere: not while clients work through the proxy, not when it refuses them."""
    user, password, wrong = unique("Pr0xy-user"), unique("Pr0xy-pass"), unique("Pr0xy-wr0ng")
    bootstrap = kafka.bootstrap_for("PLAINTEXT")
    texts: list[str] = []
    with Socks5Server(username=user, password=password) as proxy, krafka_debug_logs() as logs:
        options = {"bootstrap_servers": bootstrap, "socks5_proxy": proxy.url}
        properties = {"bootstrap.servers": bootstrap, "socks5.proxy": proxy.url}
        keywords = keywords_from_config(properties, "consumer")
        async with Producer(**options) as producer, Consumer.from_config(properties) as consumer:
            await producer.send_and_wait(unique("proxied"), b"v")
            await consumer.assign([])
            texts += [repr(keywords), *reachable_text(keywords, producer, consumer)]
        bad = {**options, "socks5_proxy": proxy.url.replace(password, wrong)}
        for client in (Producer, Consumer, AdminClient):
            with pytest.raises(ProxyAuthenticationError) as info:
                async with client(**bad):
                    pass
            texts += traceback.format_exception(info.value)
            texts += [repr(info.value), str(info.value), *reachable_text(info.value)]
    assert proxy.tunnels() and len(proxy.refusals()) >= 3
    assert "through the SOCKS5 proxy" in logs.text  # the DEBUG lines were there to look at
    assert not leaks([user, password, wrong], texts)
    assert not leaks([user, password, wrong], logs.lines)


def test_no_secret_in_configs_built_from_properties(kafka: KafkaCluster) -> None:
    secret = unique("Jaa5-secret")
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="alice" password="{secret}";'
    )
    properties = {
        "bootstrap.servers": kafka.bootstrap_for("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": jaas,
        "ssl.key.password": secret,
    }
    keywords = keywords_from_config(properties, "producer")
    producer = Producer.from_config(properties)
    assert not leaks([secret], [repr(keywords), *reachable_text(keywords, producer)])
    del producer
    gc.collect()


def test_the_cli_never_prints_a_password(kafka: KafkaCluster, tmp_path: Path) -> None:
    good = kafka.users["alice"]
    wrong = unique("Cli-wr0ng")
    bootstrap = kafka.bootstrap_for("SASL_PLAINTEXT")

    def config(password: str) -> str:
        properties = {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            f'required username="alice" password="{password}";',
        }
        return str(write_properties(tmp_path / f"{password}.properties", properties))

    cli = ("--bootstrap-server", bootstrap)
    refused = run_cli(*cli, "--command-config", config(wrong), "--debug", "topics", "list")
    assert refused.returncode == 1 and "Traceback" in refused.stderr, refused.stderr
    assert "DEBUG" in refused.stderr
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("krafka: error: ")
    assert f"{bootstrap}: SASL SCRAM-SHA-512 authentication failed" in last
    topic = unique("cli-secrets")
    works = run_cli(*cli, "--command-config", config(good), "--debug", "produce", topic, stdin="v")
    assert works.returncode == 0 and "authenticated to" in works.stderr, works.stderr
    for run in (refused, works):
        assert not leaks([good, wrong], [run.stdout, run.stderr])
