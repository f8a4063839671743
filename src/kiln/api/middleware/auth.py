"""Token validation by keystonemiddleware, then the request context (heat-api.md 1.2 7-8).

``keystone_auth(app, settings)`` wraps ``app`` in keystonemiddleware's
``AuthProtocol`` (validates ``X-Auth-Token`` against Keystone: a real one or the
sandbox's) and ``ContextMiddleware`` (turns the identity headers it sets into a
``kiln.api.context.RequestContext`` under ``environ[ENVIRON_KEY]``).

A missing, invalid or expired token is answered by keystonemiddleware itself,
exactly as Heat's is (4.1): status 401, ``WWW-Authenticate: Keystone
uri="<www_authenticate_uri>"`` and
``{"error": {"code": 401, "title": "Unauthorized", "message": "The request you
have made requires authentication."}}``. Keystone unreachable: 503.

The configuration AuthProtocol gets (``authtoken_conf``) is a dict of
``[keystone_authtoken]`` options plus a private ``oslo_config.cfg.ConfigOpts``,
so nothing touches the global ``cfg.CONF`` and no memcached is needed::

    {
        "www_authenticate_uri": "http://keystone:5000/v3",  # for WWW-Authenticate
        "auth_type": "password",       # how the service user logs in
        "interface": "public",         # which catalog endpoint of Keystone to use
        "delay_auth_decision": False,  # no token -> 401 here, not in the app
        "service_token_roles_required": True,
        "include_service_catalog": True,
        "oslo_config_config": <private cfg.ConfigOpts>,
    }

and on that private ConfigOpts, group ``keystone_authtoken``, the password
plugin's options (``auth_url``, ``username``, ``password``, ``project_name``,
``user_domain_id``, ``project_domain_id``) set as overrides. keystonemiddleware
reads plugin options from the ConfigOpts; putting them in the dict works too
but logs "option not known" warnings. Without ``memcached_servers`` validated
tokens are cached in process memory for ``token_cache_time`` (300 s); that is
enough for one node, and keystonemiddleware logs at start-up that it prefers
memcached (set ``memcached_servers`` in ``options`` when several API processes run).

A deployment with a heat.conf-style file passes the ConfigOpts that parsed it
(``AuthSettings.config``): every ``[keystone_authtoken]`` option of the file
then applies, and the explicit fields only fill in what they set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oslo_config import cfg

from kiln.api.context import ENVIRON_KEY, RequestContext
from kiln.api.middleware.oslo_conf import private_config
from kiln.api.middleware.request_id import ENV_GLOBAL_REQUEST_ID, ENV_REQUEST_ID
from kiln.api.middleware.responses import StartResponse, WSGIApp
from kiln.api.middleware.token_cache import ENV_KEY as TOKEN_CACHE_ENV_KEY
from kiln.api.middleware.token_cache import ProvideTokenCache, TokenCache

GROUP = "keystone_authtoken"
_PLUGIN_FIELDS = (
    "auth_url",
    "username",
    "password",
    "project_name",
    "user_domain_id",
    "project_domain_id",
)


@dataclass(frozen=True)
class AuthSettings:
    """Where Keystone is and how the API's service user logs in to it.

    ``auth_url``: Keystone's URL (``http://host:5000`` or ``.../v3``).
    ``www_authenticate_uri``: what 401s point clients at (default: ``auth_url``).
    ``options``: any other ``[keystone_authtoken]`` option by its heat.conf name
    (``cafile``, ``memcached_servers``, ``region_name``, ...).
    ``config``: a ConfigOpts already holding ``[keystone_authtoken]`` (parsed from
    a config file); None uses a private, empty one.
    """

    auth_url: str | None = None
    username: str | None = None
    password: str | None = None
    project_name: str | None = "service"
    user_domain_id: str | None = "default"
    project_domain_id: str | None = "default"
    www_authenticate_uri: str | None = None
    interface: str | None = "public"
    auth_type: str | None = "password"
    options: Mapping[str, Any] = field(default_factory=dict)
    config: cfg.ConfigOpts | None = None
    #: a cache the co-located identity service flushes on revocation (``kiln all``)
    token_cache: TokenCache | None = None

    @classmethod
    def from_config(cls, config: cfg.ConfigOpts) -> AuthSettings:
        """Everything from ``config``'s ``[keystone_authtoken]``, nothing overridden."""
        return cls(
            project_name=None,
            user_domain_id=None,
            project_domain_id=None,
            interface=None,
            auth_type=None,
            config=config,
        )


def authtoken_conf(settings: AuthSettings) -> dict[str, Any]:
    """The ``conf`` argument of keystonemiddleware's ``AuthProtocol`` for ``settings``."""
    from keystoneauth1 import loading  # imported late: only the auth mode needs it

    config = settings.config if settings.config is not None else private_config()
    conf: dict[str, Any] = {
        "delay_auth_decision": False,
        "service_token_roles_required": True,
        "include_service_catalog": True,
    }
    uri = settings.www_authenticate_uri or settings.auth_url
    if uri:
        conf["www_authenticate_uri"] = uri
    if settings.interface:
        conf["interface"] = settings.interface
    if settings.auth_type:
        conf["auth_type"] = settings.auth_type
        loader: Any = loading.get_plugin_loader(settings.auth_type)
        plugin_opts = loading.get_auth_plugin_conf_options(loader)
        config.register_opts(plugin_opts, group=GROUP)
        known = {opt.dest for opt in plugin_opts}
        for name in _PLUGIN_FIELDS:
            value = getattr(settings, name)
            if value is not None and name in known:
                config.set_override(name, value, group=GROUP)
    if settings.token_cache is not None:
        conf["cache"] = TOKEN_CACHE_ENV_KEY  # keystonemiddleware: environ key of a cache
    conf.update(settings.options)
    conf["oslo_config_config"] = config
    return conf


def keystone_auth(app: WSGIApp, settings: AuthSettings) -> WSGIApp:
    """``app`` behind token validation and the context middleware."""
    from keystonemiddleware import auth_token  # imports WebOb: see the package docstring

    protocol: WSGIApp = auth_token.AuthProtocol(ContextMiddleware(app), authtoken_conf(settings))
    if settings.token_cache is not None:
        protocol = ProvideTokenCache(protocol, settings.token_cache)
    return protocol


class ContextMiddleware:
    """Builds the RequestContext from the headers keystonemiddleware set.

    keystonemiddleware strips these headers from the incoming request before
    validating, so a client cannot forge them; this middleware must only ever
    run behind it.
    """

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        environ[ENVIRON_KEY] = context_from_headers(environ)
        return self.app(environ, start_response)


def context_from_headers(environ: Mapping[str, Any]) -> RequestContext:
    def header(name: str) -> str:
        return str(environ.get("HTTP_" + name, "")).strip()

    roles = tuple(r.strip() for r in header("X_ROLES").split(",") if r.strip())
    extra: dict[str, Any] = {
        "user_domain_id": header("X_USER_DOMAIN_ID") or None,
        "project_domain_id": header("X_PROJECT_DOMAIN_ID") or None,
        "global_request_id": environ.get(ENV_GLOBAL_REQUEST_ID),
        "region_name": header("X_REGION_NAME") or None,
    }
    return RequestContext(
        project_id=header("X_PROJECT_ID"),
        user_id=header("X_USER_ID"),
        user_name=header("X_USER_NAME"),
        project_name=header("X_PROJECT_NAME"),
        roles=roles,
        auth_token=header("X_AUTH_TOKEN") or None,
        request_id=str(environ.get(ENV_REQUEST_ID, "")),
        # keystonemiddleware sends "True"/"False"; absent means a normal project.
        is_admin_project=header("X_IS_ADMIN_PROJECT").lower() != "false",
        domain_id=header("X_PROJECT_DOMAIN_ID") or header("X_USER_DOMAIN_ID") or "default",
        extra={k: v for k, v in extra.items() if v is not None},
    )
