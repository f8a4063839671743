"""Password hashing with PBKDF2-SHA256 (stdlib), salted, constant-time compared."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

# A sandbox, not a bank: enough iterations to not store passwords in the clear, few
# enough that a token request stays in the low milliseconds.
ITERATIONS = 10_000


def hash_password(password: str, *, iterations: int = ITERATIONS) -> str:
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    encoded_salt = base64.b64encode(salt).decode()
    return f"pbkdf2_sha256${iterations}${encoded_salt}${base64.b64encode(digest).decode()}"


def check_password(password: str, stored: str | None) -> bool:
    if not stored:
        return False
    try:
        scheme, iterations, salt, digest = stored.split("$")
        if scheme != "pbkdf2_sha256":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.pbkdf2_hmac(
            "sha256", password.encode(), base64.b64decode(salt), int(iterations)
        )
    except ValueError:
        return False
    return hmac.compare_digest(expected, actual)
