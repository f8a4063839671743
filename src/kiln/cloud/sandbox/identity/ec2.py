"""EC2 credentials: storage, and checking an EC2 request signature (v2 and v4).

The caller of ``POST /v3/ec2tokens`` (Kiln's CFN API, for signed wait-condition and alarm
URLs) sends what it saw of the request: access key, signature, host, verb, path, query
parameters, headers and the body's SHA-256. The signature is computed again here with the
credential's secret, the way AWS defines it and keystoneclient's ``Ec2Signer`` does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from kiln.cloud.sandbox.identity import tables as t
from kiln.cloud.sandbox.identity.database import new_id
from kiln.cloud.sandbox.identity.errors import NotFound, ValidationError
from kiln.cloud.sandbox.identity.records import Credential
from kiln.cloud.sandbox.identity.store import IdentityStore

V4_ALGORITHM = "AWS4-HMAC-SHA256"
EMPTY_BODY_SHA256 = hashlib.sha256(b"").hexdigest()

# -- signatures -------------------------------------------------------------------------


def _quote(value: object, safe: str) -> str:
    return urllib.parse.quote(str(value).encode(), safe=safe)


def canonical_query(params: Mapping[str, Any], *, exclude: str) -> str:
    """Parameters sorted by name, percent-encoded, joined by ``&``."""
    return "&".join(
        f"{_quote(key, '')}={_quote(params[key], '-_~')}"
        for key in sorted(params)
        if key != exclude
    )


def signature_v2(secret: str, credentials: Mapping[str, Any]) -> str:
    params = credentials.get("params") or {}
    digest = hashlib.sha1 if params.get("SignatureMethod") == "HmacSHA1" else hashlib.sha256
    text = "{}\n{}\n{}\n{}".format(
        credentials["verb"],
        str(credentials["host"]).lower(),
        credentials["path"],
        canonical_query(params, exclude="Signature"),
    )
    mac = hmac.new(secret.encode(), text.encode(), digest)
    return base64.b64encode(mac.digest()).decode()


def _v4_auth_fields(credentials: Mapping[str, Any]) -> dict[str, str]:
    """Credential, SignedHeaders and date, from the Authorization header or the query."""
    headers = {k.lower(): str(v) for k, v in (credentials.get("headers") or {}).items()}
    params = credentials.get("params") or {}
    authorization = headers.get("authorization", "")
    if authorization.startswith(V4_ALGORITHM):
        fields = {}
        for part in authorization[len(V4_ALGORITHM) :].split(","):
            name, _, value = part.strip().partition("=")
            fields[name] = value
        date = headers.get("x-amz-date", "")
    else:
        fields = {
            "Credential": str(params.get("X-Amz-Credential", "")),
            "SignedHeaders": str(params.get("X-Amz-SignedHeaders", "")),
        }
        date = str(params.get("X-Amz-Date", ""))
    fields["Date"] = date
    return fields


def is_v4(credentials: Mapping[str, Any]) -> bool:
    headers = {k.lower(): str(v) for k, v in (credentials.get("headers") or {}).items()}
    params = credentials.get("params") or {}
    return (
        headers.get("authorization", "").startswith(V4_ALGORITHM)
        or params.get("X-Amz-Algorithm") == V4_ALGORITHM
    )


def signature_v4(secret: str, credentials: Mapping[str, Any]) -> str:
    fields = _v4_auth_fields(credentials)
    headers = {k.lower().strip(): str(v).strip() for k, v in credentials["headers"].items()}
    headers.setdefault("host", str(credentials["host"]))
    signed = fields["SignedHeaders"]
    canonical_headers = "".join(
        f"{name}:{headers[name]}\n" for name in signed.split(";") if name in headers
    )
    verb = str(credentials["verb"]).upper()
    # A POST carries its parameters in the body, which the body hash covers.
    query = (
        "" if verb == "POST" else canonical_query(credentials["params"], exclude="X-Amz-Signature")
    )
    body_hash = credentials.get("body_hash") or EMPTY_BODY_SHA256
    request = "\n".join((verb, credentials["path"], query, canonical_headers, signed, body_hash))
    scope_parts = fields["Credential"].split("/")
    if len(scope_parts) != 5 or not fields["Date"].startswith(scope_parts[1]):
        raise ValidationError("The EC2 v4 credential scope or date is malformed.")
    _access, day, region, service, _terminator = scope_parts
    to_sign = "\n".join(
        (
            V4_ALGORITHM,
            fields["Date"],
            "/".join(scope_parts[1:]),
            hashlib.sha256(request.encode()).hexdigest(),
        )
    )
    key = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def signature_matches(secret: str, credentials: Mapping[str, Any]) -> bool:
    """Whether the given signature is right, also trying the host without its port."""
    try:
        given = str(credentials["signature"])
        compute = signature_v4 if is_v4(credentials) else signature_v2
        host = str(credentials["host"])
        hosts = [host, host.rsplit(":", 1)[0]] if ":" in host else [host]
        for candidate in hosts:
            expected = compute(secret, {**credentials, "host": candidate})
            if hmac.compare_digest(given.encode(), expected.encode()):
                return True
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValidationError(f"The EC2 credentials are incomplete: {exc}") from exc
    return False


# -- storage ----------------------------------------------------------------------------


def ec2_credential_id(access: str) -> str:
    return hashlib.sha256(access.encode()).hexdigest()


def create_credential(
    store: IdentityStore,
    *,
    user_id: str,
    type: str,
    blob: str,
    project_id: str | None = None,
) -> Credential:
    """Store a credential; an EC2 one must have ``access`` and ``secret`` in its blob."""
    store.get_user(user_id)
    if project_id is not None:
        store.get_project(project_id)
    if type == "ec2":
        access = ec2_blob(blob)["access"]
        credential_id = ec2_credential_id(access)
    else:
        credential_id = new_id()
    encrypted = store.fernet("credential").encrypt(blob.encode()).decode()
    values = dict(
        id=credential_id,
        user_id=user_id,
        project_id=project_id,
        type=type,
        encrypted_blob=encrypted,
    )
    store.write(lambda c: c.execute(t.credentials.insert().values(**values)))
    return Credential(credential_id, user_id, project_id, type, blob)


def ec2_blob(blob: str) -> dict[str, Any]:
    """The blob of an EC2 credential as a dict with string ``access`` and ``secret``."""
    try:
        data = json.loads(blob)
    except ValueError as exc:
        raise ValidationError("The credential blob is not valid JSON.") from exc
    if not (
        isinstance(data, dict)
        and isinstance(data.get("access"), str)
        and isinstance(data.get("secret"), str)
    ):
        raise ValidationError("An ec2 credential blob needs string access and secret.")
    return data


def list_credentials(
    store: IdentityStore, *, user_id: str | None = None, type: str | None = None
) -> list[Credential]:
    c_ = t.credentials.c
    query = sa.select(t.credentials).order_by(c_.id)
    if user_id is not None:
        query = query.where(c_.user_id == user_id)
    if type is not None:
        query = query.where(c_.type == type)
    rows = store.read(lambda c: c.execute(query).mappings().all())
    fernet = store.fernet("credential")
    return [
        Credential(
            r["id"],
            r["user_id"],
            r["project_id"],
            r["type"],
            fernet.decrypt(r["encrypted_blob"].encode()).decode(),
        )
        for r in rows
    ]


def get_credential(store: IdentityStore, credential_id: str) -> Credential:
    c_ = t.credentials.c
    query = sa.select(t.credentials).where(c_.id == credential_id)
    row = store.read(lambda c: c.execute(query).mappings().first())
    if row is None:
        raise NotFound(f"Could not find credential: {credential_id}.")
    blob = store.fernet("credential").decrypt(row["encrypted_blob"].encode()).decode()
    return Credential(row["id"], row["user_id"], row["project_id"], row["type"], blob)


def delete_credential(store: IdentityStore, credential_id: str) -> None:
    get_credential(store, credential_id)
    stmt = t.credentials.delete().where(t.credentials.c.id == credential_id)
    store.write(lambda c: c.execute(stmt))
