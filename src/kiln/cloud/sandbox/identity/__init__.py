"""The sandbox's identity service: a Keystone v3 subset over SQLAlchemy tables.

Good enough for keystoneauth, keystonemiddleware and python-openstackclient: password and
token auth, signed expiring tokens with revocation, the service catalog, domains, projects,
users, roles (with implied roles), role assignments, trusts and EC2 credentials.

    store = IdentityStore(engine)            # creates the keystone_* tables
    bootstrap(store, admin_password="...", demo_password="...", service_password="...")
    app = create_identity_app(store, catalog=[CatalogEntry("orchestration", "heat", url)])
    handle = serve_in_thread(app, "127.0.0.1", 5000)   # kiln.cloud.sandbox.http_server

Services that validate tokens against it: ``middleware_conf.auth_token_conf``. Bootstrap
also makes Heat's stack-user domain ``heat`` and its domain admin ``heat_domain_admin``;
an admin token scoped to a domain manages that domain only. The engine's in-process
identity client (``adapter.StackDomainAdapter``) acts as that admin.
"""

from kiln.cloud.sandbox.identity.app import create_identity_app
from kiln.cloud.sandbox.identity.bootstrap import BootstrapResult, bootstrap
from kiln.cloud.sandbox.identity.catalog import CatalogEntry
from kiln.cloud.sandbox.identity.middleware_conf import auth_token_conf
from kiln.cloud.sandbox.identity.store import IdentityStore

__all__ = [
    "BootstrapResult",
    "CatalogEntry",
    "IdentityStore",
    "auth_token_conf",
    "bootstrap",
    "create_identity_app",
]
