"""Seed the identity service: the default domain, admin and demo projects, users, roles,
and Heat's stack-user domain ``heat`` with its domain admin ``heat_domain_admin``.

Idempotent: what exists is kept (passwords are set to the given ones, as
``keystone-manage bootstrap`` does), what is missing is created. Safe to run from two
processes at once: a create that loses the race finds the winner's object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from kiln.cloud.sandbox.identity.errors import Conflict, NotFound
from kiln.cloud.sandbox.identity.passwords import check_password
from kiln.cloud.sandbox.identity.records import Domain, Project, Role, User
from kiln.cloud.sandbox.identity.store import IdentityStore

T = TypeVar("T")

DEFAULT_DOMAIN_ID = "default"
DEFAULT_DOMAIN_NAME = "Default"
ROLE_NAMES = ("admin", "member", "reader", "heat_stack_owner", "heat_stack_user")
# prior -> implied: a token with admin also lists member and reader.
IMPLIED_ROLES = (("admin", "member"), ("member", "reader"))
SERVICE_USER = "kiln"
#: Heat's stack-user domain (stack_user_domain_name) and the admin of that domain alone
#: (stack_domain_admin), who makes each stack's project, users and EC2 keys there
STACK_USER_DOMAIN_NAME = "heat"
STACK_DOMAIN_ADMIN = "heat_domain_admin"


@dataclass(frozen=True)
class BootstrapResult:
    admin_project: Project
    demo_project: Project
    service_project: Project
    admin_user: User
    demo_user: User
    service_user: User
    roles: dict[str, Role]
    stack_domain: Domain
    stack_domain_admin: User


def _ensure(find: Callable[[], T], create: Callable[[], T]) -> T:
    try:
        return find()
    except NotFound:
        pass
    try:
        return create()
    except Conflict:
        return find()


def _ensure_user(
    store: IdentityStore, name: str, password: str, domain_id: str = DEFAULT_DOMAIN_ID
) -> User:
    user = _ensure(
        lambda: store.find_user(name=name, domain_id=domain_id),
        lambda: store.create_user(name, domain_id=domain_id, password=password),
    )
    if not check_password(password, user.password_hash) or not user.enabled:
        user = store.update_user(user.id, password=password, enabled=True)
    return user


def _ensure_project(store: IdentityStore, name: str) -> Project:
    return _ensure(
        lambda: store.find_project(name=name, domain_id=DEFAULT_DOMAIN_ID),
        lambda: store.create_project(name, domain_id=DEFAULT_DOMAIN_ID),
    )


def bootstrap(
    store: IdentityStore,
    *,
    admin_password: str,
    demo_password: str,
    service_password: str | None = None,
    service_user_name: str = SERVICE_USER,
    stack_domain_admin_password: str | None = None,
) -> BootstrapResult:
    """Create what is missing; ``service_password`` and ``stack_domain_admin_password``
    default to the admin password.

    Users: ``admin`` (admin on project admin), ``demo`` (member on project demo), the
    orchestration service user ``kiln`` (admin on project admin, used by
    keystonemiddleware and as the trustee of stack trusts) and, in domain ``heat``,
    ``heat_domain_admin`` (admin on domain ``heat`` only).
    """
    _ensure(
        lambda: store.get_domain(DEFAULT_DOMAIN_ID),
        lambda: store.create_domain(DEFAULT_DOMAIN_NAME, id=DEFAULT_DOMAIN_ID),
    )
    roles = {
        name: _ensure(
            lambda name=name: store.find_role(name=name),  # type: ignore[misc]
            lambda name=name: store.create_role(name),  # type: ignore[misc]
        )
        for name in ROLE_NAMES
    }
    existing = store.list_implied_roles()
    for prior_name, implied_name in IMPLIED_ROLES:
        rule = (roles[prior_name].id, roles[implied_name].id)
        if rule not in existing:
            try:
                store.add_implied_role(*rule)
            except Conflict:
                pass  # a concurrent bootstrap added it
    admin_project = _ensure_project(store, "admin")
    demo_project = _ensure_project(store, "demo")
    service_project = _ensure_project(store, "service")
    admin_user = _ensure_user(store, "admin", admin_password)
    demo_user = _ensure_user(store, "demo", demo_password)
    service_user = _ensure_user(store, service_user_name, service_password or admin_password)
    for user, role, project in (
        (admin_user, "admin", admin_project),
        (demo_user, "member", demo_project),
        (service_user, "admin", admin_project),
    ):
        store.grant(user.id, roles[role].id, target_type="project", target_id=project.id)
    stack_domain = _ensure(
        lambda: store.find_domain(name=STACK_USER_DOMAIN_NAME),
        lambda: store.create_domain(
            STACK_USER_DOMAIN_NAME, description="Heat's stack users and their projects"
        ),
    )
    stack_domain_admin = _ensure_user(
        store, STACK_DOMAIN_ADMIN, stack_domain_admin_password or admin_password, stack_domain.id
    )
    store.grant(
        stack_domain_admin.id, roles["admin"].id, target_type="domain", target_id=stack_domain.id
    )
    return BootstrapResult(
        admin_project=admin_project,
        demo_project=demo_project,
        service_project=service_project,
        admin_user=admin_user,
        demo_user=demo_user,
        service_user=service_user,
        roles=roles,
        stack_domain=stack_domain,
        stack_domain_admin=stack_domain_admin,
    )
