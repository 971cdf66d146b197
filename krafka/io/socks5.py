"""Reaching brokers through a SOCKS5 proxy (`socks5_proxy="socks5://[user:pass@]host:port"`).

The handshake is python-socks' (`python_socks.async_.anyio.Proxy`, `pip install
'krafka[socks]'`); krafka parses the URL itself so the password is a `Secret` from the start
(the proxy object holding it in the clear lives only while one connection is being opened),
and turns every failure into a `ProxyError` that names the proxy by `host:port` only.
Broker names are resolved by the proxy (SOCKS5 "remote DNS"), as a bastion needs; TLS, when
configured, runs inside the proxied stream and checks the broker's name (`transport.py`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import anyio.abc

from krafka.errors import (
    ConfigError,
    KrafkaError,
    ProxyAuthenticationError,
    ProxyConnectionError,
)
from krafka.sansio.secret import Secret

INSTALL_HINT: Final = "socks5_proxy needs python-socks: pip install 'krafka[socks]'"
#: Schemes accepted: both mean a SOCKS5 proxy that resolves broker names itself.
SCHEMES: Final = frozenset({"socks5", "socks5h"})
#: RFC 1928 reply codes of a proxy that could not open the connection to the broker.
REPLIES: Final = {
    1: "general SOCKS server failure",
    2: "connection not allowed by ruleset",
    3: "network unreachable",
    4: "host unreachable",
    5: "connection refused",
    6: "TTL expired",
    7: "command not supported",
    8: "address type not supported",
}


@dataclass(frozen=True, slots=True)
class Socks5Proxy:
    """A SOCKS5 proxy; `username`/`password` for RFC 1929 authentication, both kept as
    `Secret`s (the URL's credentials are secrets) and out of `repr`; `str` is
    `socks5://host:port`."""

    host: str
    port: int
    username: Secret | None = field(default=None, repr=False)
    password: Secret | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"socks5://{self.address}"


def parse_socks5_proxy(value: str | Secret | Socks5Proxy) -> Socks5Proxy:
    """`value` as a `Socks5Proxy`: a URL `socks5://[user:pass@]host:port` (text or a `Secret`),
    percent-escapes allowed in the user and password. A bad URL raises `ConfigError` naming
    what is wrong, never the URL (it may hold the password)."""
    if isinstance(value, Socks5Proxy):
        return _checked(value)
    url = value.reveal() if isinstance(value, Secret) else value
    if not isinstance(url, str):
        raise ConfigError(f"socks5_proxy is a 'socks5://host:port' URL, not {type(url).__name__}")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ConfigError("socks5_proxy: the URL's port is not a number from 0 to 65535") from None
    if parts.scheme.lower() not in SCHEMES:
        raise ConfigError("socks5_proxy must start with socks5:// (socks5://[user:pass@]host:port)")
    if not parts.hostname or port is None:
        raise ConfigError("socks5_proxy needs a host and a port: socks5://[user:pass@]host:port")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigError("socks5_proxy is socks5://[user:pass@]host:port, with nothing after it")
    username = None if parts.username is None else Secret(unquote(parts.username))
    password = None if parts.password is None else Secret(unquote(parts.password))
    return _checked(Socks5Proxy(parts.hostname, port, username, password))


def _checked(proxy: Socks5Proxy) -> Socks5Proxy:
    if (proxy.username is None) != (proxy.password is None):
        raise ConfigError(f"socks5_proxy {proxy}: give both a username and a password, or neither")
    for name, text in (("username", proxy.username), ("password", proxy.password)):
        if text is not None and len(text.reveal_bytes()) > 255:  # RFC 1929: one length byte
            raise ConfigError(f"socks5_proxy {proxy}: the {name} is longer than 255 bytes")
    if importlib.util.find_spec("python_socks") is None:
        raise ConfigError(INSTALL_HINT)
    return proxy


async def connect_through(proxy: Socks5Proxy, host: str, port: int) -> anyio.abc.SocketStream:
    """A TCP stream to `host:port` through `proxy` (bound by the caller's deadline). Failures
    are `ProxyError`s naming the proxy and the broker."""
    from python_socks import ProxyError as SocksReplyError
    from python_socks import ProxyType
    from python_socks._errors import IncompleteReadError  # escapes python-socks' anyio Proxy
    from python_socks.async_.anyio import Proxy

    where = f"{host}:{port}"
    at = f"the SOCKS5 proxy {proxy.address}"
    user = None if proxy.username is None else proxy.username.reveal()
    secret = None if proxy.password is None else proxy.password.reveal()
    client = Proxy(ProxyType.SOCKS5, proxy.host, proxy.port, user, secret, rdns=True)
    try:
        stream: anyio.abc.SocketStream = await client.connect(host, port)
    except SocksReplyError as exc:
        raise _reply_error(proxy, where, exc) from None
    except IncompleteReadError:
        raise _closed_error(proxy, where) from None
    except OSError as exc:  # python-socks' ProxyConnectionError: the proxy is not there
        reason = exc.__cause__ or exc.strerror or type(exc).__name__
        raise ProxyConnectionError(f"cannot reach {at} (to connect to {where}): {reason}") from None
    finally:
        del client, user, secret
    return stream


def _reply_error(proxy: Socks5Proxy, where: str, exc: Any) -> KrafkaError:
    """The error for a proxy's answer refusing the credentials or the connection to the
    broker, or one that is not SOCKS5."""
    code = getattr(exc, "error_code", None)
    at = f"the SOCKS5 proxy {proxy.address}"
    if code is not None:
        reason = REPLIES.get(code, f"reply code {code:#04x}")
        return ProxyConnectionError(f"{at} could not connect to {where}: {reason}")
    detail = str(exc)
    if "authentication" in detail.lower():
        given = "refused the username and password" if proxy.username else "wants a username"
        return ProxyAuthenticationError(f"{at} {given} (connecting to {where}): {detail}")
    if isinstance(exc.__cause__, Exception) and "closed" in str(exc.__cause__).lower():
        return _closed_error(proxy, where)
    return ProxyConnectionError(f"the SOCKS5 handshake with {at} failed (to {where}): {detail}")


def _closed_error(proxy: Socks5Proxy, where: str) -> KrafkaError:
    """A proxy that hangs up during the handshake (rather than answering a refusal, as some
    do): with credentials given, most likely it refused them."""
    at = f"the SOCKS5 proxy {proxy.address}"
    if proxy.username is not None:
        return ProxyAuthenticationError(
            f"{at} closed the connection during the SOCKS5 handshake (connecting to {where}): "
            "it refused the username and password, or is not a SOCKS5 proxy"
        )
    return ProxyConnectionError(
        f"{at} closed the connection during the SOCKS5 handshake (connecting to {where}): "
        "does it want a username and password (socks5://user:pass@host:port)?"
    )
