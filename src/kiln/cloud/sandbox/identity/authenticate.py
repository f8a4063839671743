"""``POST /v3/auth/tokens``: who the caller is (password or token) and what scope they get."""

from __future__ import annotations

from typing import Any

from kiln.cloud.sandbox.identity.errors import (
    Forbidden,
    NotFound,
    Unauthorized,
    ValidationError,
)
from kiln.cloud.sandbox.identity.passwords import check_password
from kiln.cloud.sandbox.identity.records import Domain, Project, User
from kiln.cloud.sandbox.identity.store import IdentityStore
from kiln.cloud.sandbox.identity.tokens import TokenInfo, TokenService
from kiln.cloud.sandbox.identity.trusts import consume_use, get_trust
from kiln.cloud.sandbox.identity.web import field

TRUST_SCOPE = "OS-TRUST:trust"
_BAD_CREDENTIALS = "The request you have made requires authentication."


def find_domain(store: IdentityStore, ref: object) -> Domain:
    """A domain given as ``{"id"}`` or ``{"name"}``."""
    domain_id = field(ref, "id", str, required=False)
    name = field(ref, "name", str, required=domain_id is None)
    return store.find_domain(id=domain_id, name=name)


def _find_by_ref(store: IdentityStore, ref: object, kind: str) -> User | Project:
    """A user or project given as ``{"id"}`` or ``{"name", "domain": {...}}``."""
    object_id = field(ref, "id", str, required=False)
    if object_id is not None:
        return store.get_user(object_id) if kind == "user" else store.get_project(object_id)
    name = field(ref, "name", str)
    domain_ref = field(ref, "domain", dict, required=False)
    if domain_ref is None:
        raise ValidationError(f"Expecting to find domain in {kind}.")
    domain = find_domain(store, domain_ref)
    if kind == "user":
        return store.find_user(name=name, domain_id=domain.id)
    return store.find_project(name=name, domain_id=domain.id)


def _password_user(store: IdentityStore, identity: dict[str, Any]) -> User:
    password_ref = field(identity, "password", dict)
    user_ref = field(password_ref, "user", dict)
    password = field(user_ref, "password", str)
    try:
        user = _find_by_ref(store, user_ref, "user")
    except NotFound as exc:
        raise Unauthorized(_BAD_CREDENTIALS) from exc
    assert isinstance(user, User)
    if not check_password(password, user.password_hash):
        raise Unauthorized(_BAD_CREDENTIALS)
    if not user.enabled or not store.get_domain(user.domain_id).enabled:
        raise Unauthorized(_BAD_CREDENTIALS)
    return user


def authenticate(
    store: IdentityStore, tokens: TokenService, body: dict[str, Any]
) -> tuple[str, TokenInfo]:
    """Check the identity methods, work out the scope, and issue the token."""
    auth = field(body, "auth", dict)
    identity = field(auth, "identity", dict)
    methods = field(identity, "methods", list)
    if not methods or not all(isinstance(m, str) for m in methods):
        raise ValidationError("'methods' must be a non-empty list of method names.")
    user: User | None = None
    parent: TokenInfo | None = None
    for method in methods:
        if method == "password":
            found = _password_user(store, identity)
        elif method == "token":
            token_id = field(field(identity, "token", dict), "id", str)
            parent = tokens.validate(token_id)
            found = parent.user
        else:
            raise Unauthorized(f"Attempted to authenticate with an unsupported method: {method}.")
        if user is not None and user.id != found.id:
            raise Unauthorized("The auth methods identify different users.")
        user = found
    assert user is not None

    scope = auth.get("scope")
    if parent is not None and parent.trust is not None:
        if scope is not None and scope != {TRUST_SCOPE: {"id": parent.trust.id}}:
            raise Forbidden("A trust-scoped token cannot be rescoped.")
        scope = {TRUST_SCOPE: {"id": parent.trust.id}}
    parent_kwargs: dict[str, Any] = {}
    if parent is not None:
        parent_kwargs = dict(
            expires_at=parent.payload.expires_at, parent_audit_ids=parent.payload.audit_ids
        )

    if scope is None:
        if user.default_project_id and store.effective_role_ids(
            user.id, target_type="project", target_id=user.default_project_id
        ):
            return tokens.issue(user, methods, project_id=user.default_project_id, **parent_kwargs)
        return tokens.issue(user, methods, **parent_kwargs)
    if scope == "unscoped":
        return tokens.issue(user, methods, **parent_kwargs)
    if not isinstance(scope, dict) or len(scope) != 1:
        raise ValidationError("'scope' must name one project, domain or trust.")
    try:
        if "project" in scope:
            project = _find_by_ref(store, scope["project"], "project")
            return tokens.issue(user, methods, project_id=project.id, **parent_kwargs)
        if "domain" in scope:
            domain = find_domain(store, scope["domain"])
            return tokens.issue(user, methods, domain_id=domain.id, **parent_kwargs)
        if TRUST_SCOPE in scope:
            return _trust_token(store, tokens, user, methods, scope[TRUST_SCOPE], parent_kwargs)
    except (NotFound, Forbidden) as exc:
        raise Unauthorized(str(exc.message)) from exc
    raise ValidationError(f"Unsupported scope: {', '.join(scope)}.")


def _trust_token(
    store: IdentityStore,
    tokens: TokenService,
    caller: User,
    methods: list[str],
    trust_ref: object,
    parent_kwargs: dict[str, Any],
) -> tuple[str, TokenInfo]:
    trust = get_trust(store, field(trust_ref, "id", str))
    if caller.id != trust.trustee_user_id:
        raise Forbidden("The user is not the trustee of the trust.")
    acting = store.get_user(trust.trustor_user_id) if trust.impersonation else caller
    token = tokens.issue(acting, methods, trust=trust, **parent_kwargs)
    # Count the use only once the token could be issued (the trust is still good).
    if not parent_kwargs and not consume_use(store, trust):
        raise Unauthorized(f"Trust {trust.id} has no uses left.")
    return token
