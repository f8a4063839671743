"""keystonemiddleware ``auth_token`` settings for services that trust this identity service.

Use with ``keystonemiddleware.auth_token.AuthProtocol(app, conf)`` (the paste-style dict;
no oslo.config files needed). What was found to work, and what to expect:

* ``auth_type=password`` with the plugin options (``auth_url``, ``username``, ``password``,
  ``project_name``, ``user_domain_id``, ``project_domain_id``) in the same dict. The
  middleware logs 'The option "auth_url" is not known to keystonemiddleware' for each of
  them but does hand them to the password plugin: harmless.
* No ``memcached_servers``: the in-process token cache is used, and the middleware logs
  that it is deprecated: harmless. ``token_cache_time`` (default 300 s) is how long a
  revoked token may still be accepted; ``-1`` turns the cache off (tests use that).
* The service user needs the admin (or service) role to validate other users' tokens;
  bootstrap's ``kiln`` user has admin on project ``admin``.
* Importing keystonemiddleware imports WebOb, which imports the deprecated ``cgi`` module:
  under ``-W error`` import it inside ``warnings.catch_warnings()``.
"""

from __future__ import annotations

from typing import Any


def auth_token_conf(
    identity_url: str,
    *,
    password: str,
    username: str = "kiln",
    project_name: str = "admin",
    token_cache_time: int = 300,
    include_service_catalog: bool = True,
) -> dict[str, Any]:
    """The conf dict for ``AuthProtocol``; ``identity_url`` without ``/v3``."""
    base = identity_url.rstrip("/")
    return {
        "www_authenticate_uri": base + "/v3",
        "auth_url": base + "/v3",
        "auth_type": "password",
        "username": username,
        "password": password,
        "project_name": project_name,
        "user_domain_id": "default",
        "project_domain_id": "default",
        "interface": "public",
        "delay_auth_decision": False,
        "include_service_catalog": include_service_catalog,
        "token_cache_time": token_cache_time,
    }
