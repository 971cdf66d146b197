"""Opening the byte stream to a broker: TCP, optionally TLS (mTLS, hostname checks), on anyio.

Every failure becomes a `KrafkaError`: network trouble is `KafkaConnectionError` (retriable), a TLS
problem (untrusted certificate, wrong hostname, rejected client certificate) is
`AuthenticationError` (not retriable: reconnecting will not fix it), a slow connect is
`KafkaTimeoutError`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeVar

import anyio
import anyio.abc
from anyio.streams.tls import TLSStream

from krafka.errors import (
    AuthenticationError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    ProxyConnectionError,
)
from krafka.io.socks5 import Socks5Proxy, connect_through
from krafka.sansio.secret import Secret

log = logging.getLogger(__name__)
_P = TypeVar("_P", bound=asyncio.BaseProtocol)
#: RFC 8305's delay before racing the next address of a host (anyio's `connect_tcp` default).
_HAPPY_EYEBALLS_DELAY: Final = 0.25
#: Alerts a broker ends the handshake with when it refuses the client's certificate (mTLS).
_CLIENT_CERTIFICATE_ALERTS: Final = frozenset(
    {
        "SSLV3_ALERT_BAD_CERTIFICATE",
        "SSLV3_ALERT_CERTIFICATE_EXPIRED",
        "SSLV3_ALERT_CERTIFICATE_REVOKED",
        "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
        "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
        "TLSV13_ALERT_CERTIFICATE_REQUIRED",
        "TLSV1_ALERT_ACCESS_DENIED",
        "TLSV1_ALERT_UNKNOWN_CA",
    }
)


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """How to reach brokers. `ssl_context` enables TLS; load a client certificate into it
    (`load_cert_chain`) for mTLS. `server_hostname` overrides the name checked against the
    broker certificate (default: the broker's host). `proxy`: every connection goes through
    this SOCKS5 proxy (TLS then runs inside the proxied stream)."""

    ssl_context: ssl.SSLContext | None = None
    server_hostname: str | None = None
    connect_timeout: float = 10.0
    proxy: Socks5Proxy | None = None


def create_ssl_context(
    cafile: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: str | Secret | None = None,
    *,
    check_hostname: bool = True,
    cadata: str | None = None,
    capath: str | None = None,
    crlfile: str | None = None,
    verify: bool = True,
    minimum_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2,
    ciphers: str | None = None,
) -> ssl.SSLContext:
    """A client TLS context (Java's `ssl.truststore`/`ssl.keystore` as PEM files).

    `cafile`/`capath`/`cadata` add trusted CAs (default: the system store); `certfile`/`keyfile`
    enable mTLS; `crlfile` checks the broker certificate against a revocation list.
    `check_hostname=False` skips the name check; `verify=False` accepts any certificate (only
    for tests: anyone in the path can then read and change the traffic).
    """
    ctx = ssl.create_default_context(cafile=cafile, capath=capath, cadata=cadata)
    ctx.minimum_version = minimum_version
    if certfile is not None:
        secret = password.reveal() if isinstance(password, Secret) else password
        ctx.load_cert_chain(certfile, keyfile, secret)
    if crlfile is not None:
        ctx.load_verify_locations(crlfile)
        ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if ciphers is not None:
        ctx.set_ciphers(ciphers)
    ctx.check_hostname = check_hostname and verify
    if not verify:
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def open_transport(
    host: str, port: int, config: TransportConfig, timeout: float | None = None
) -> anyio.abc.ByteStream:
    """A connected (and, with TLS, handshaken) stream to `host:port`, within `timeout`
    seconds (default: the config's `connect_timeout`); a failure says which step failed."""
    limit = config.connect_timeout if timeout is None else timeout
    where = f"{host}:{port}"
    proxy = config.proxy
    step = "connecting to"
    if proxy is not None:
        step = f"connecting through the SOCKS5 proxy {proxy.address} to"
    try:
        with anyio.fail_after(limit):
            stream: anyio.abc.ByteStream = await (
                anyio.connect_tcp(host, port)
                if proxy is None
                else connect_through(proxy, host, port)
            )
            if proxy is not None:
                log.debug("connected to %s through the SOCKS5 proxy %s", where, proxy.address)
            if config.ssl_context is None:
                return stream
            step = "the TLS handshake with"
            try:
                return await TLSStream.wrap(
                    stream,
                    hostname=config.server_hostname or host,
                    ssl_context=config.ssl_context,
                    standard_compatible=False,
                )
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await anyio.aclose_forcefully(stream)
                raise
    except TimeoutError:
        hint = " (is it a TLS listener?)" if step.startswith("the TLS") else ""
        raise KafkaTimeoutError(f"{step} {where} took longer than {limit:.3g}s{hint}") from None
    except BaseException as exc:
        error = transport_error(exc, where)
        if error is None:
            raise
        if step.startswith("the TLS") and type(error) is KafkaConnectionError:
            message = f"the TLS handshake with {where} failed: the connection closed ({exc!r}); "
            error = (
                KafkaConnectionError(message + "is it a TLS listener?")
                if proxy is None
                else ProxyConnectionError(
                    f"{message}can the SOCKS5 proxy {proxy.address} reach it, and is it a TLS "
                    "listener?"
                )
            )
        raise error from exc


def direct_eligible(config: TransportConfig) -> bool:
    """Whether connections can be asyncio protocols fed straight by the event loop
    (`open_direct`): plaintext TCP with no proxy, on asyncio."""
    if config.ssl_context is not None or config.proxy is not None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # trio
        return False
    return True


async def open_direct(
    host: str,
    port: int,
    config: TransportConfig,
    protocol: Callable[[], _P],
    timeout: float | None = None,
) -> tuple[asyncio.Transport, _P]:
    """A plaintext TCP connection to `host:port` driving `protocol()`, within `timeout`
    seconds (default: the config's `connect_timeout`), failing as `open_transport` does. On
    asyncio, a protocol the loop calls with each chunk read, and whose transport writes at
    once, saves a reader and a writer task a wake-up per request."""
    limit = config.connect_timeout if timeout is None else timeout
    where = f"{host}:{port}"
    try:
        with anyio.fail_after(limit):
            loop = asyncio.get_running_loop()
            transport, made = await loop.create_connection(
                protocol, host, port, happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY
            )
    except TimeoutError:
        raise KafkaTimeoutError(f"connecting to {where} took longer than {limit:.3g}s") from None
    except BaseException as exc:
        error = transport_error(exc, where)
        if error is None:
            raise
        raise error from exc
    assert isinstance(transport, asyncio.Transport)
    return transport, made


def transport_error(exc: BaseException, where: str) -> KrafkaError | None:
    """The `KrafkaError` for a transport exception, or None if `exc` is not one (cancellation)."""
    if isinstance(exc, KrafkaError):
        return exc
    cause = exc.__cause__ if isinstance(exc, anyio.BrokenResourceError) else exc
    if isinstance(cause, ssl.SSLCertVerificationError):
        detail = cause.verify_message or str(cause)
        return AuthenticationError(f"TLS certificate of {where} rejected: {detail}")
    if isinstance(cause, ssl.SSLError) and not isinstance(
        cause, ssl.SSLEOFError | ssl.SSLSyscallError
    ):
        reason = cause.reason or str(cause)
        if reason == "WRONG_VERSION_NUMBER":
            reason += " (the peer does not speak TLS: is it a plaintext listener?)"
        if reason in _CLIENT_CERTIFICATE_ALERTS:
            return AuthenticationError(
                f"TLS with {where} failed: the broker refused the client certificate (none "
                f"was sent, or it is not trusted or has expired): {reason}"
            )
        return AuthenticationError(f"TLS with {where} failed: {reason}")
    if isinstance(exc, anyio.EndOfStream | anyio.BrokenResourceError | anyio.ClosedResourceError):
        return KafkaConnectionError(f"connection to {where} lost")
    if isinstance(exc, OSError):
        return KafkaConnectionError(f"cannot reach {where}: {exc.strerror or exc}")
    return None
