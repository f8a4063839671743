"""The identity service's tables: ``keystone_*`` in a MetaData of their own.

They live in the same database as the rest of Kiln but are created with
``metadata.create_all`` by the store (not by Kiln's migrations), because the sandbox may
not import ``kiln.db``. Times are naive UTC ``DateTime``s. No foreign keys: SQLite does
not enforce them by default, so the store deletes dependents itself.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

ID = sa.String(64)
NAME = sa.String(255)

domains = sa.Table(
    "keystone_domains",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("name", NAME, nullable=False, unique=True),
    sa.Column("description", sa.Text, nullable=False, default=""),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
)

projects = sa.Table(
    "keystone_projects",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("name", NAME, nullable=False),
    sa.Column("domain_id", ID, nullable=False),
    sa.Column("description", sa.Text, nullable=False, default=""),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("parent_id", ID, nullable=True),
    sa.Column("tags", sa.Text, nullable=False, default="[]"),  # JSON list of strings
    sa.UniqueConstraint("domain_id", "name", name="uq_keystone_projects_domain_name"),
)

users = sa.Table(
    "keystone_users",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("name", NAME, nullable=False),
    sa.Column("domain_id", ID, nullable=False),
    sa.Column("password_hash", sa.Text, nullable=True),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("default_project_id", ID, nullable=True),
    sa.Column("description", sa.Text, nullable=False, default=""),
    sa.Column("email", sa.Text, nullable=True),
    sa.Column("options", sa.Text, nullable=False, default="{}"),  # JSON object
    sa.UniqueConstraint("domain_id", "name", name="uq_keystone_users_domain_name"),
)

roles = sa.Table(
    "keystone_roles",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("name", NAME, nullable=False, unique=True),
    sa.Column("description", sa.Text, nullable=False, default=""),
)

# "admin implies member": a token with the prior role also lists the implied one.
implied_roles = sa.Table(
    "keystone_implied_roles",
    metadata,
    sa.Column("prior_role_id", ID, primary_key=True),
    sa.Column("implied_role_id", ID, primary_key=True),
)

# A user's role on a project or a domain (target_type "project" | "domain").
assignments = sa.Table(
    "keystone_assignments",
    metadata,
    sa.Column("user_id", ID, primary_key=True),
    sa.Column("target_type", sa.String(16), primary_key=True),
    sa.Column("target_id", ID, primary_key=True),
    sa.Column("role_id", ID, primary_key=True),
)

trusts = sa.Table(
    "keystone_trusts",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("trustor_user_id", ID, nullable=False, index=True),
    sa.Column("trustee_user_id", ID, nullable=False, index=True),
    sa.Column("project_id", ID, nullable=True),
    sa.Column("impersonation", sa.Boolean, nullable=False),
    sa.Column("allow_redelegation", sa.Boolean, nullable=False, default=False),
    sa.Column("expires_at", sa.DateTime, nullable=True),
    sa.Column("remaining_uses", sa.Integer, nullable=True),  # None: unlimited
    sa.Column("created_at", sa.DateTime, nullable=False),
)

trust_roles = sa.Table(
    "keystone_trust_roles",
    metadata,
    sa.Column("trust_id", ID, primary_key=True),
    sa.Column("role_id", ID, primary_key=True),
)

# Credentials (EC2 key pairs). The blob holds the secret, so it is encrypted with the
# store's key; the id of an EC2 credential is sha256(access), which is how it is found.
credentials = sa.Table(
    "keystone_credentials",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("user_id", ID, nullable=False, index=True),
    sa.Column("project_id", ID, nullable=True),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("encrypted_blob", sa.Text, nullable=False),
)

# Revoked tokens, by audit id; a row is kept until the token would have expired anyway.
revocations = sa.Table(
    "keystone_revocations",
    metadata,
    sa.Column("audit_id", sa.String(64), primary_key=True),
    sa.Column("expires_at", sa.DateTime, nullable=False, index=True),
    sa.Column("revoked_at", sa.DateTime, nullable=False),
)

# Service-wide settings, such as the token signing key.
settings = sa.Table(
    "keystone_settings",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
