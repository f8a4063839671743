"""Real key material for keypairs: generation, validation and fingerprints.

Nova (before 2.92) generates a keypair when the request has no ``public_key`` and returns
the private key once; Heat's ``OS::Nova::KeyPair`` relies on it. Keys here are real
(``cryptography``), so a generated private key works with ssh.
"""

from __future__ import annotations

import base64
import datetime
import hashlib

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from kiln.cloud.api.errors import BadRequest


def _colons(digest: bytes) -> str:
    return ":".join(f"{byte:02x}" for byte in digest)


def ssh_fingerprint(public_key: str) -> str:
    """The MD5 fingerprint Nova shows for an OpenSSH public key."""
    blob = base64.b64decode(public_key.split()[1])
    return _colons(hashlib.md5(blob, usedforsecurity=False).digest())


def x509_fingerprint(certificate: str) -> str:
    """The SHA-1 fingerprint Nova shows for an x509 certificate."""
    cert = x509.load_pem_x509_certificate(certificate.encode())
    return _colons(cert.fingerprint(hashes.SHA1()))  # SHA-1: what Nova shows


def validate_public_key(public_key: str, key_type: str) -> str:
    """The fingerprint of a valid ``public_key``; 400 "Keypair data is invalid" otherwise."""
    try:
        if key_type == "x509":
            return x509_fingerprint(public_key)
        serialization.load_ssh_public_key(public_key.strip().encode())
        return ssh_fingerprint(public_key.strip())
    except (ValueError, IndexError, UnsupportedAlgorithm) as exc:
        raise BadRequest(
            f"Keypair data is invalid: failed to generate fingerprint ({exc})"
        ) from exc


def generate(key_type: str, name: str) -> tuple[str, str]:
    """A new (private key PEM, public key) pair: OpenSSH for ``ssh``, a certificate for x509."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    if key_type == "x509":
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650))
            .sign(key, hashes.SHA256())
        )
        return private, cert.public_bytes(serialization.Encoding.PEM).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return private, f"{public.decode()} Generated-by-Nova"
