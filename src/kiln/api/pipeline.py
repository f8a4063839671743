"""The native API's WSGI pipeline, in Heat's order (heat-api.md 1.2).

Outermost first:

1. request id: every response carries ``X-Openstack-Request-Id``;
2. fault wrap: whatever escapes further in becomes Heat's error body;
3. proxy headers (oslo.middleware ``HTTPProxyToWSGI``, only when enabled):
   ``X-Forwarded-Proto``/``-Host``/``-Prefix`` and ``Forwarded`` set the
   scheme, host and prefix the API builds its absolute URLs from;
4. ``/healthcheck``, unauthenticated;
5. the JSON body limit;
6. version negotiation (``/``, ``/versions``, ``/v1``): before auth, so
   discovery needs no token;
7. auth: keystonemiddleware and the context middleware, or the no-auth
   development mode, which builds the context itself;
8. the Falcon app.

Heat's CORS stage (inactive unless configured) and ``authurl`` (only for
multi-cloud) are not part of Kiln.
"""

from __future__ import annotations

from kiln.api.middleware.auth import AuthSettings, keystone_auth
from kiln.api.middleware.body_limit import BodyLimit
from kiln.api.middleware.fault_wrap import FaultWrap
from kiln.api.middleware.healthcheck import Healthcheck
from kiln.api.middleware.noauth import NoAuth
from kiln.api.middleware.oslo_conf import private_config
from kiln.api.middleware.request_id import RequestId
from kiln.api.middleware.responses import WSGIApp
from kiln.api.native.support import ApiSettings
from kiln.api.versions import VersionNegotiation

__all__ = ["AuthSettings", "build_native_pipeline"]


def build_native_pipeline(
    app: WSGIApp,
    *,
    settings: ApiSettings,
    auth: AuthSettings | None,
    debug: bool | None = None,
    proxy_headers: bool = False,
    healthcheck_disable_path: str | None = None,
) -> WSGIApp:
    """``app`` (the Falcon app of ``kiln.api.native.app.create_app``) behind the pipeline.

    ``auth`` None is the no-auth development mode. ``debug`` (default:
    ``settings.debug``) puts tracebacks in 500 bodies. ``proxy_headers`` is
    oslo.middleware's ``enable_proxy_headers_parsing`` (off, as in Heat: trust
    those headers only behind a proxy that sets them).
    """
    debug = settings.debug if debug is None else debug
    wrapped: WSGIApp = NoAuth(app) if auth is None else keystone_auth(app, auth)
    wrapped = VersionNegotiation(wrapped)
    wrapped = BodyLimit(wrapped, max_size=settings.max_json_body_size)
    wrapped = Healthcheck(wrapped, disable_by_file_path=healthcheck_disable_path)
    if proxy_headers:
        wrapped = _proxy_headers(wrapped)
    wrapped = FaultWrap(wrapped, debug=debug)
    return RequestId(wrapped)


def _proxy_headers(app: WSGIApp) -> WSGIApp:
    from oslo_middleware.http_proxy_to_wsgi import HTTPProxyToWSGI

    conf = private_config()
    proxy = HTTPProxyToWSGI(app, conf)  # registers its option on our private conf
    conf.set_override("enable_proxy_headers_parsing", True, group="oslo_middleware")
    wrapped: WSGIApp = proxy
    return wrapped
