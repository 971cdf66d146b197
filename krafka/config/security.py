"""`security.protocol`, `ssl.*` and `sasl.*` properties -> `ssl_context` and `sasl_*` keywords.

Java and librdkafka spellings are both read (`ssl.ca.location` and `ssl.truststore.location`,
`sasl.mechanism` and `sasl.mechanisms`, `sasl.jaas.config` and `sasl.username`). TLS material
and SASL settings must agree with `security.protocol` (it defaults to PLAINTEXT): a CA file
given to a PLAINTEXT client is a mistake that would send everything in the clear, so it is
refused rather than ignored. Stores are read as PEM; JKS and PKCS#12 stores must be converted
(`keytool -importkeystore` to PKCS#12, then `openssl pkcs12 -nodes`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any, Final

from krafka.config.options import (
    Converter,
    Settings,
    boolean,
    choice,
    listing,
    number,
    optional_text,
    secret,
    text,
)
from krafka.errors import ConfigError
from krafka.sansio.sasl import OAuthBearerToken
from krafka.sansio.secret import Secret

log = logging.getLogger(__name__)

_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "AWS_MSK_IAM",
                       "GSSAPI")  # fmt: skip
_TLS_VERSIONS: Final = {
    "TLS": ssl.TLSVersion.TLSv1_2,
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
}


def pem_store(value: Any) -> str:
    """`ssl.truststore.type` / `ssl.keystore.type`: krafka reads PEM only."""
    kind = text(value).strip().upper()
    if kind != "PEM":
        raise ConfigError(
            f"krafka reads PEM stores only, not {kind}: convert it (keytool -importkeystore "
            "-deststoretype PKCS12, then openssl pkcs12 -nodes) and set the type to PEM"
        )
    return kind


def hostname_check(value: Any) -> bool:
    """`ssl.endpoint.identification.algorithm`: "https" checks the name, "" or "none" not."""
    algorithm = (optional_text(value) or "none").lower()
    if algorithm not in ("https", "none"):
        raise ValueError('expected "https", "none" or ""')
    return algorithm == "https"


#: Java / librdkafka property -> (setting, converter), for the shared client table.
OPTIONS: Final[Mapping[str, tuple[str, Converter]]] = {
    "security.protocol": ("security_protocol", choice(*_PROTOCOLS, upper=True)),
    "ssl.ca.location": ("ssl_ca", text),
    "ssl.cafile": ("ssl_ca", text),
    "ssl.truststore.location": ("ssl_ca", text),
    "ssl.ca.pem": ("ssl_ca_pem", text),
    "ssl.truststore.certificates": ("ssl_ca_pem", text),
    "ssl.truststore.type": ("ssl_truststore_type", pem_store),
    "ssl.certificate.location": ("ssl_certfile", text),
    "ssl.certfile": ("ssl_certfile", text),
    "ssl.keystore.location": ("ssl_certfile", text),
    "ssl.certificate.pem": ("ssl_cert_pem", text),
    "ssl.keystore.certificate.chain": ("ssl_cert_pem", text),
    "ssl.keystore.type": ("ssl_keystore_type", pem_store),
    "ssl.key.location": ("ssl_keyfile", text),
    "ssl.keyfile": ("ssl_keyfile", text),
    "ssl.key.pem": ("ssl_key_pem", secret),
    "ssl.keystore.key": ("ssl_key_pem", secret),
    "ssl.key.password": ("ssl_key_password", secret),
    "ssl.password": ("ssl_key_password", secret),
    "ssl.crl.location": ("ssl_crlfile", text),
    "ssl.endpoint.identification.algorithm": ("ssl_check_hostname", hostname_check),
    "enable.ssl.certificate.verification": ("ssl_verify", boolean),
    "ssl.protocol": ("ssl_protocol", text),
    "ssl.enabled.protocols": ("ssl_enabled_protocols", listing),
    "ssl.cipher.suites": ("ssl_ciphers", listing),
    "sasl.mechanism": ("sasl_mechanism", choice(*_MECHANISMS, upper=True)),
    "sasl.mechanisms": ("sasl_mechanism", choice(*_MECHANISMS, upper=True)),
    "sasl.username": ("sasl_username", text),
    "sasl.password": ("sasl_password", secret),
    "sasl.jaas.config": ("sasl_jaas_config", secret),
    "sasl.oauthbearer.method": ("sasl_oauthbearer_method", choice("default", "oidc")),
    "sasl.oauthbearer.token.endpoint.url": ("sasl_oauthbearer_token_endpoint_url", text),
    "sasl.oauthbearer.client.id": ("sasl_oauthbearer_client_id", text),
    "sasl.oauthbearer.client.secret": ("sasl_oauthbearer_client_secret", secret),
    "sasl.oauthbearer.scope": ("sasl_oauthbearer_scope", text),
    "sasl.oauthbearer.extensions": ("sasl_oauthbearer_extensions", listing),
    "sasl.oauthbearer.config": ("sasl_oauthbearer_config", text),
    "enable.sasl.oauthbearer.unsecure.jwt": ("sasl_oauthbearer_unsecure_jwt", boolean),
    "sasl.login.read.timeout.ms": ("sasl_oauthbearer_timeout", lambda v: number(v) / 1000),
    "oauth_cb": ("sasl_oauth_token_provider", lambda cb: ConfluentOAuthCallback(cb)),
}  # fmt: skip

IGNORED: Final[Mapping[str, str]] = {
    "ssl.truststore.password": "PEM trust stores have no password",
    "ssl.keystore.password": "PEM key stores have none (an encrypted key uses ssl.key.password)",
    "ssl.keymanager.algorithm": "a JVM security provider setting",
    "ssl.trustmanager.algorithm": "a JVM security provider setting",
    "ssl.secure.random.implementation": "a JVM security provider setting",
    "ssl.provider": "a JVM security provider setting",
    "sasl.login.callback.handler.class": "the token endpoint URL selects the OAuth 2 login",
    "sasl.client.callback.handler.class": "krafka picks the login from sasl.mechanism (MSK IAM's "
    "IAMClientCallbackHandler included)",
    "sasl.login.class": "krafka picks the login from sasl.mechanism",
    "sasl.login.connect.timeout.ms": "sasl.login.read.timeout.ms bounds the token request",
    "sasl.login.refresh.window.factor": "each authentication gets a token valid for 20%+ of "
    "its lifetime",
    "sasl.login.refresh.window.jitter": "tokens are refreshed when a connection re-authenticates",
    "sasl.login.refresh.min.period.seconds": "tokens are refreshed when a connection "
    "re-authenticates",
    "sasl.login.refresh.buffer.seconds": "tokens are refreshed when a connection re-authenticates",
    "sasl.login.retry.backoff.ms": "a failed token request fails the connection attempt, which "
    "reconnect.backoff.ms paces",
    "sasl.login.retry.backoff.max.ms": "a failed token request fails the connection attempt, "
    "which reconnect.backoff.max.ms paces",
    "sasl.oauthbearer.scope.claim.name": "the token is sent as issued; the broker reads claims",
    "sasl.oauthbearer.sub.claim.name": "the token is sent as issued; the broker reads claims",
    "sasl.oauthbearer.expected.audience": "a broker setting",
    "sasl.oauthbearer.expected.issuer": "a broker setting",
    "sasl.oauthbearer.jwks.endpoint.url": "a broker setting",
}

UNSUPPORTED: Final[Mapping[str, str]] = {
    prop: "GSSAPI (Kerberos) is not supported; use SCRAM-SHA-256/512, PLAIN or OAUTHBEARER"
    for prop in (
        "sasl.kerberos.service.name",
        "sasl.kerberos.principal",
        "sasl.kerberos.keytab",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.min.time.before.relogin",
    )
} | {
    "ssl.engine.location": "OpenSSL engines are not supported",
    "ssl.engine.id": "OpenSSL engines are not supported",
    "ssl.keystore.location.pkcs12": "convert the store to PEM",
    "ssl.engine.factory.class": "a JVM class",
}

_TLS_MATERIAL: Final = ("ssl_ca", "ssl_ca_pem", "ssl_certfile", "ssl_cert_pem", "ssl_keyfile",
                        "ssl_key_pem", "ssl_crlfile")  # fmt: skip
_SASL: Final = tuple(name for name, _ in OPTIONS.values() if name.startswith("sasl_"))
_TLS: Final = tuple(name for name, _ in OPTIONS.values() if name.startswith("ssl_"))


def finish(settings: Settings) -> Settings:
    """Turn the security settings into `ssl_context` and `sasl_*` keywords."""
    out = {k: v for k, v in settings.items() if k not in _TLS and k not in _SASL}
    out.pop("security_protocol", None)
    tls = {k: v for k, v in settings.items() if k in _TLS}
    sasl = {k: v for k, v in settings.items() if k in _SASL}
    protocol = settings.get("security_protocol", "PLAINTEXT")
    if protocol in ("SSL", "SASL_SSL"):
        out["ssl_context"] = ssl_context_from(tls)
    elif material := [k for k in _TLS_MATERIAL if k in tls]:
        raise ConfigError(
            f"TLS settings ({', '.join(material)}) given but security.protocol is {protocol}: "
            "set it to SSL or SASL_SSL"
        )
    if protocol.startswith("SASL_"):
        out.update(sasl_keywords(sasl))
    elif sasl:
        raise ConfigError(
            f"SASL settings ({', '.join(sorted(sasl))}) given but security.protocol is "
            f"{protocol}: set it to SASL_SSL or SASL_PLAINTEXT"
        )
    return out


# -- TLS ------------------------------------------------------------------------------------------


def ssl_context_from(tls: Settings) -> ssl.SSLContext:
    """The client context the TLS settings describe."""
    from krafka.io.transport import create_ssl_context

    ca = tls.get("ssl_ca")
    cafile, capath = (None, ca) if ca is not None and os.path.isdir(ca) else (ca, None)
    if cafile == "probe":  # librdkafka: look for the system store, which is the default here
        cafile = None
    for path in (cafile, tls.get("ssl_certfile")):
        if path is not None:
            _require_pem(path)
    verify = tls.get("ssl_verify", True)
    if not verify:
        log.warning("enable.ssl.certificate.verification=false: broker certificates unchecked")
    try:
        with _cert_chain(tls) as (certfile, keyfile):
            return create_ssl_context(
                cafile,
                certfile,
                keyfile,
                tls.get("ssl_key_password"),
                cadata=tls.get("ssl_ca_pem"),
                capath=capath,
                crlfile=tls.get("ssl_crlfile"),
                check_hostname=tls.get("ssl_check_hostname", True),
                verify=verify,
                minimum_version=_minimum_version(tls),
                ciphers=":".join(tls["ssl_ciphers"]) if tls.get("ssl_ciphers") else None,
            )
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot build the TLS context: {exc}") from None


def _require_pem(path: str) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN" not in head:
        raise ConfigError(
            f"{path} is not a PEM file (a JKS or PKCS#12 store?): krafka reads PEM; convert it "
            "with keytool -importkeystore -deststoretype PKCS12, then openssl pkcs12 -nodes"
        )


@contextlib.contextmanager
def _cert_chain(tls: Settings) -> Iterator[tuple[str | None, str | None]]:
    """Files for `load_cert_chain`: the given ones, or private temporary copies of PEM text
    (Python's ssl loads a client certificate only from files)."""
    cert_pem, key_pem = tls.get("ssl_cert_pem"), tls.get("ssl_key_pem")
    if cert_pem is None:
        if key_pem is not None:
            raise ConfigError("ssl.key.pem needs ssl.certificate.pem")
        yield tls.get("ssl_certfile"), tls.get("ssl_keyfile")
        return
    key_text = key_pem.reveal() if isinstance(key_pem, Secret) else None
    with tempfile.TemporaryDirectory(prefix="krafka-tls-") as tmp:
        certfile = _private_file(tmp, "cert.pem", cert_pem)
        keyfile = None if key_text is None else _private_file(tmp, "key.pem", key_text)
        yield certfile, keyfile


def _private_file(directory: str, name: str, content: str) -> str:
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(content)
    return path


def _minimum_version(tls: Settings) -> ssl.TLSVersion:
    names = tls.get("ssl_enabled_protocols") or [tls.get("ssl_protocol", "TLSv1.2")]
    versions = []
    for name in names:
        version = _TLS_VERSIONS.get(str(name).upper())
        if version is None:
            raise ConfigError(f"TLS protocol {name!r}: krafka speaks TLSv1.2 and TLSv1.3")
        versions.append(version)
    return min(versions)


# -- SASL -----------------------------------------------------------------------------------------

_JAAS_OPTION: Final = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+?))\s*(?=;|\s|$)')


def sasl_keywords(sasl: Settings) -> Settings:
    """`sasl_mechanism`, `sasl_username`, `sasl_password`, `sasl_oauth_token_provider`,
    `sasl_scram_token_auth` (the JAAS option `tokenauth="true"`: a delegation token), and for
    AWS_MSK_IAM `sasl` (an `MskIamLogin` from the `IAMLoginModule` options)."""
    mechanism = sasl.get("sasl_mechanism")
    if mechanism is None:
        raise ConfigError("a SASL security.protocol needs sasl.mechanism (Java's default, "
                          "GSSAPI, is not supported)")  # fmt: skip
    if mechanism == "GSSAPI":
        raise ConfigError(UNSUPPORTED["sasl.kerberos.service.name"])
    jaas = _jaas_options(sasl.get("sasl_jaas_config"))
    out: Settings = {"sasl_mechanism": mechanism}
    username = sasl.get("sasl_username", jaas.get("username"))
    password = sasl.get("sasl_password", _maybe_secret(jaas.get("password")))
    if username is not None:
        out["sasl_username"] = username
    if password is not None:
        out["sasl_password"] = password
    if _token_auth(jaas):
        if not mechanism.startswith("SCRAM-"):
            raise ConfigError("sasl.jaas.config tokenauth=true needs a SCRAM sasl.mechanism")
        out["sasl_scram_token_auth"] = True
    if mechanism == "AWS_MSK_IAM":
        out["sasl"] = _msk_iam_login(jaas)
    if mechanism == "OAUTHBEARER":
        provider = sasl.get("sasl_oauth_token_provider") or _token_provider(sasl, jaas)
        if provider is not None:
            out["sasl_oauth_token_provider"] = provider
    return out


def _msk_iam_login(jaas: Mapping[str, str]) -> Any:
    """Amazon's `IAMLoginModule` options: `awsProfileName`, `awsRoleArn`,
    `awsRoleSessionName`, `awsStsRegion`."""
    from krafka.io.msk_iam import DEFAULT_ROLE_SESSION_NAME, MskIamLogin

    return MskIamLogin(
        profile=jaas.get("awsProfileName"),
        role_arn=jaas.get("awsRoleArn"),
        role_session_name=jaas.get("awsRoleSessionName", DEFAULT_ROLE_SESSION_NAME),
        sts_region=jaas.get("awsStsRegion"),
    )


def _token_auth(jaas: Mapping[str, str]) -> bool:
    try:
        return boolean(jaas.get("tokenauth", "false"))
    except ValueError:
        raise ConfigError("sasl.jaas.config: tokenauth is true or false") from None


def _jaas_options(config: Secret | None) -> dict[str, str]:
    """`... LoginModule required username="alice" password="secret";` -> its options."""
    if config is None:
        return {}
    body = config.reveal()
    if " required" not in body:
        raise ConfigError("sasl.jaas.config: expected '<LoginModule> required key=\"value\" ...;'")
    body = body.split(" required", 1)[1]
    return {
        m.group(1): (m.group(2) if m.group(2) is not None else m.group(3)).replace('\\"', '"')
        for m in _JAAS_OPTION.finditer(body)
    }


def _maybe_secret(value: str | None) -> Secret | None:
    return None if value is None else Secret(value)


def _token_provider(sasl: Settings, jaas: Mapping[str, str]) -> Any:
    from krafka.io.oauth import ClientCredentialsProvider, UnsecuredJwtProvider

    extensions = _extensions(sasl.get("sasl_oauthbearer_extensions") or [])
    url = sasl.get("sasl_oauthbearer_token_endpoint_url")
    client_id = sasl.get("sasl_oauthbearer_client_id", jaas.get("clientId"))
    client_secret = sasl.get(
        "sasl_oauthbearer_client_secret", _maybe_secret(jaas.get("clientSecret"))
    )
    if sasl.get("sasl_oauthbearer_method") == "oidc" or url is not None:
        if url is None or client_id is None or client_secret is None:
            raise ConfigError(
                "OAUTHBEARER with OIDC needs sasl.oauthbearer.token.endpoint.url, "
                "sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret"
            )
        return ClientCredentialsProvider(
            url,
            client_id,
            client_secret,
            scope=sasl.get("sasl_oauthbearer_scope", jaas.get("scope")),
            extensions=extensions,
            timeout=sasl.get("sasl_oauthbearer_timeout", 10.0),
        )
    unsecured = _unsecured_jwt(sasl.get("sasl_oauthbearer_config"), jaas)
    if unsecured is None:
        return None
    principal, scope, lifetime, more = unsecured
    if not sasl.get("sasl_oauthbearer_unsecure_jwt", True):
        raise ConfigError("sasl.oauthbearer.config needs enable.sasl.oauthbearer.unsecure.jwt")
    return UnsecuredJwtProvider(
        principal, scope=scope, lifetime=lifetime, extensions={**extensions, **more}
    )


def _unsecured_jwt(
    config: str | None, jaas: Mapping[str, str]
) -> tuple[str, list[str], float, dict[str, str]] | None:
    """librdkafka's `principal=... scope=... lifeSeconds=... extension_k=v`, or Java's
    `unsecuredLoginStringClaim_sub="..."` JAAS options."""
    if config is not None:
        pairs = dict(item.split("=", 1) for item in config.split() if "=" in item)
        principal = pairs.get("principal")
        if principal is None:
            raise ConfigError("sasl.oauthbearer.config needs principal=<name>")
        scope = [s for s in pairs.get("scope", "").split(",") if s]
        extensions = {k[10:]: v for k, v in pairs.items() if k.startswith("extension_")}
        return principal, scope, float(pairs.get("lifeSeconds", 3600)), extensions
    principal = jaas.get("unsecuredLoginStringClaim_sub")
    if principal is None:
        return None
    scope = [s for s in jaas.get("unsecuredLoginListClaim_scope", "").split(",") if s]
    return principal, scope, float(jaas.get("unsecuredLoginLifetimeSeconds", 3600)), {}


def _extensions(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"sasl.oauthbearer.extensions: {item!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


class ConfluentOAuthCallback:
    """confluent-kafka's `oauth_cb(config_str) -> (token, expiry_epoch_seconds[, principal,
    extensions])` as a krafka token provider."""

    def __init__(self, callback: Any, config: str = "") -> None:
        if not callable(callback):
            raise TypeError("oauth_cb must be callable")
        self._callback = callback
        self._config = config

    def __call__(self) -> OAuthBearerToken:
        token, expiry, *rest = self._callback(self._config)
        principal = rest[0] if rest else None
        extensions = rest[1] if len(rest) > 1 else None
        return OAuthBearerToken(token, int(float(expiry) * 1000), principal, extensions)
