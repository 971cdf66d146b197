"""Certificates for TLS tests: a private CA, a server and a client certificate, and the broken
ones a client must refuse (unknown CA, wrong host, expired), written as PEM files.

Made with the `cryptography` package (no `openssl` binary needed). Keys are P-256, written as
unencrypted PKCS#8, which is what both Python's `ssl` and Kafka's PEM key stores read.

    material = TlsMaterial.create(tmp_path)
    ctx = material.client_context(with_cert=True)
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _require_cryptography() -> Any:
    try:
        from cryptography import x509
    except ImportError as exc:  # pragma: no cover - a dev dependency
        raise ImportError(
            "krafka.testing.tls needs the 'cryptography' package: pip install cryptography"
        ) from exc
    return x509


@dataclass(frozen=True, slots=True)
class TlsMaterial:
    """PEM files in one directory. `server_pem` / `client_pem` (and `wrong_host_pem`,
    `expired_pem`) hold key and chain together (the layout Kafka's `ssl.keystore.type=PEM` file
    store reads)."""

    directory: Path
    ca: Path
    other_ca: Path
    server_cert: Path
    server_key: Path
    server_pem: Path
    client_cert: Path
    client_key: Path
    client_pem: Path
    wrong_host_cert: Path
    wrong_host_key: Path
    wrong_host_pem: Path
    expired_cert: Path
    expired_key: Path
    expired_pem: Path

    @classmethod
    def create(cls, directory: Path, *, client_name: str = "client") -> TlsMaterial:
        """Write a CA, an unrelated CA, a server certificate for localhost/127.0.0.1, a client
        certificate (subject `CN=client_name`), one for another host and an expired one."""
        directory.mkdir(parents=True, exist_ok=True)
        ca_key, ca_cert = _authority("krafka-test-ca")
        _other_key, other_cert = _authority("krafka-other-ca")
        paths: dict[str, Path] = {}
        paths["ca"] = _write(directory / "ca.crt", _cert_pem(ca_cert))
        paths["other_ca"] = _write(directory / "other-ca.crt", _cert_pem(other_cert))
        leaves = {
            "server": ("localhost", ["localhost", "127.0.0.1"], "server", 2),
            "client": (client_name, [], "client", 2),
            "wrong_host": ("elsewhere.invalid", ["elsewhere.invalid"], "server", 2),
            "expired": ("localhost", ["localhost", "127.0.0.1"], "server", -1),
        }
        for name, (subject, names, usage, days) in leaves.items():
            key, cert = _leaf(ca_key, ca_cert, subject, names, usage, days)
            stem = name.replace("_", "-")
            paths[f"{name}_cert"] = _write(directory / f"{stem}.crt", _cert_pem(cert))
            paths[f"{name}_key"] = _write(directory / f"{stem}.key", _key_pem(key))
            pem = _key_pem(key) + _cert_pem(cert) + _cert_pem(ca_cert)
            paths[f"{name}_pem"] = _write(directory / f"{stem}.pem", pem)
        return cls(directory=directory, **paths)

    def key_store(self, certificate: str) -> Path:
        """The PEM key store of a server certificate: "server", "wrong_host" or "expired"."""
        if certificate not in ("server", "wrong_host", "expired"):
            raise ValueError(f"no server certificate {certificate!r} (server, wrong_host, expired)")
        path: Path = getattr(self, f"{certificate}_pem")
        return path

    def server_context(self, require_client_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.server_cert, self.server_key)
        if require_client_cert:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(self.ca)
        return ctx

    def client_context(self, ca: Path | None = None, with_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(ca or self.ca))
        if with_cert:
            ctx.load_cert_chain(self.client_cert, self.client_key)
        return ctx


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _new_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    data: bytes = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return data


def _cert_pem(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    data: bytes = cert.public_bytes(serialization.Encoding.PEM)
    return data


def _name(common_name: str) -> Any:
    x509 = _require_cryptography()
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _authority(common_name: str) -> tuple[Any, Any]:
    x509 = _require_cryptography()
    from cryptography.hazmat.primitives import hashes

    key = _new_key()
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=3))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _usage(cert_sign: bool = False) -> Any:
    x509 = _require_cryptography()
    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _leaf(
    ca_key: Any, ca_cert: Any, subject: str, names: list[str], usage: str, days: int
) -> tuple[Any, Any]:
    """A certificate signed by the CA; `days < 0` makes one that expired that many days ago."""
    x509 = _require_cryptography()
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    key = _new_key()
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=days))
    if days < 0:
        start, end = now - datetime.timedelta(days=10), now + datetime.timedelta(days=days)
    purpose = (
        ExtendedKeyUsageOID.SERVER_AUTH if usage == "server" else ExtendedKeyUsageOID.CLIENT_AUTH
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(), critical=True)
        .add_extension(x509.ExtendedKeyUsage([purpose]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(_alt_names(names)), False)
    return key, builder.sign(ca_key, hashes.SHA256())


def _alt_names(names: list[str]) -> list[Any]:
    x509 = _require_cryptography()
    out: list[Any] = []
    for name in names:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name))
    return out
