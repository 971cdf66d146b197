"""Opening the byte stream to a broker: TCP, optionally TLS (mTLS, hostname checks), on anyio.

Every failure becomes a `KrafkaError`: network trouble is `KafkaConnectionError` (retriable), a TLS
problem (untrusted certificate, wrong hostname, rejected client certificate) is
`AuthenticationError` (not retriable: reconnecting will not fix it), a slow connect is
`KafkaTimeoutError`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import anyio
import anyio.abc

from krafka.errors import AuthenticationError, KafkaConnectionError, KafkaTimeoutError, KrafkaError
from krafka.sansio.secret import Secret


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """How to reach brokers. `ssl_context` enables TLS; load a client certificate into it
    (`load_cert_chain`) for mTLS. `server_hostname` overrides the name checked against the
    broker certificate (default: the broker's host)."""

    ssl_context: ssl.SSLContext | None = None
    server_hostname: str | None = None
    connect_timeout: float = 10.0


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


async def open_transport(host: str, port: int, config: TransportConfig) -> anyio.abc.ByteStream:
    """A connected (and, with TLS, handshaken) stream to `host:port`."""
    try:
        with anyio.fail_after(config.connect_timeout):
            if config.ssl_context is None:
                return await anyio.connect_tcp(host, port)
            return await anyio.connect_tcp(
                host,
                port,
                ssl_context=config.ssl_context,
                tls_hostname=config.server_hostname or host,
                tls_standard_compatible=False,
            )
    except TimeoutError:
        raise KafkaTimeoutError(
            f"connecting to {host}:{port} took longer than {config.connect_timeout}s"
        ) from None
    except BaseException as exc:
        error = transport_error(exc, f"{host}:{port}")
        if error is None:
            raise
        raise error from exc


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
        return AuthenticationError(f"TLS with {where} failed: {cause.reason or cause}")
    if isinstance(exc, anyio.EndOfStream | anyio.BrokenResourceError | anyio.ClosedResourceError):
        return KafkaConnectionError(f"connection to {where} lost")
    if isinstance(exc, OSError):
        return KafkaConnectionError(f"cannot reach {where}: {exc.strerror or exc}")
    return None
