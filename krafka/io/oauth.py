"""OAUTHBEARER token providers: OAuth 2 client credentials (OIDC) and unsecured JWTs.

`ClientCredentialsProvider` is librdkafka's `sasl.oauthbearer.method=oidc` and Java's
`OAuthBearerLoginCallbackHandler`: it asks the token endpoint for a token with the client
credentials grant (HTTP Basic authentication with the client id and secret) and reuses it
until 80% of its lifetime has passed, so each (re-)authentication sends a valid token. The
request is made synchronously when a connection authenticates (bounded by `timeout`).

`UnsecuredJwtProvider` makes an unsigned JWT (`alg: none`), for development brokers that
accept them (librdkafka's `enable.sasl.oauthbearer.unsecure.jwt`, Java's
`unsecuredLoginStringClaim_sub`).
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from krafka.errors import AuthenticationError
from krafka.sansio.sasl import OAuthBearerToken
from krafka.sansio.secret import Secret, as_secret

_REFRESH_AT = 0.8


class ClientCredentialsProvider:
    """A token provider fetching tokens from an OAuth 2 token endpoint (client credentials)."""

    def __init__(
        self,
        token_endpoint_url: str,
        client_id: str,
        client_secret: str | Secret,
        *,
        scope: str | None = None,
        extensions: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.token_endpoint_url = token_endpoint_url
        self.client_id = client_id
        self._secret = as_secret(client_secret)
        self.scope = scope
        self.extensions = dict(extensions or {})
        self.timeout = timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._token: OAuthBearerToken | None = None
        self._renew_at = 0.0

    def __repr__(self) -> str:
        return f"ClientCredentialsProvider({self.token_endpoint_url!r}, {self.client_id!r})"

    def __call__(self) -> OAuthBearerToken:
        with self._lock:
            now = self._clock()
            if self._token is None or now >= self._renew_at:
                self._token, lifetime = self._fetch()
                self._renew_at = now + lifetime * _REFRESH_AT
            return self._token

    def _fetch(self) -> tuple[OAuthBearerToken, float]:
        form = {"grant_type": "client_credentials"}
        if self.scope:
            form["scope"] = self.scope
        basic = f"{self.client_id}:{self._secret.reveal()}".encode()
        request = urllib.request.Request(
            self.token_endpoint_url,
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Authorization": "Basic " + base64.b64encode(basic).decode(),
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise AuthenticationError(
                f"token endpoint {self.token_endpoint_url} refused the client credentials: "
                f"HTTP {exc.code}"
            ) from None
        except (OSError, ValueError) as exc:
            raise AuthenticationError(
                f"no token from {self.token_endpoint_url}: {exc.__class__.__name__}"
            ) from None
        return self._token_from(body)

    def _token_from(self, body: Any) -> tuple[OAuthBearerToken, float]:
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise AuthenticationError(f"{self.token_endpoint_url} answered no access_token")
        lifetime = float(body.get("expires_in") or 3600)
        expires_ms = int((self._clock() + lifetime) * 1000)
        return OAuthBearerToken(token, expires_ms, None, self.extensions), lifetime


class UnsecuredJwtProvider:
    """Unsigned JWTs for `principal` (a new one per authentication, valid `lifetime` s)."""

    def __init__(
        self,
        principal: str,
        *,
        scope: Sequence[str] = (),
        lifetime: float = 3600.0,
        extensions: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.principal = principal
        self.scope = list(scope)
        self.lifetime = lifetime
        self.extensions = dict(extensions or {})
        self._clock = clock

    def __repr__(self) -> str:
        return f"UnsecuredJwtProvider({self.principal!r})"

    def __call__(self) -> OAuthBearerToken:
        now = self._clock()
        claims: dict[str, Any] = {
            "sub": self.principal,
            "iat": int(now),
            "exp": int(now + self.lifetime),
        }
        if self.scope:
            claims["scope"] = self.scope
        token = f"{_NONE_HEADER}.{_b64(json.dumps(claims).encode())}."
        expires_ms = int((now + self.lifetime) * 1000)
        return OAuthBearerToken(token, expires_ms, self.principal, self.extensions)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_NONE_HEADER = _b64(b'{"alg":"none"}')
