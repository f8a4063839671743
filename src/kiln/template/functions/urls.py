"""The ``make_url`` intrinsic function (reference 2.14, 2017-09-01+).

Builds ``scheme://user:password@host:port/path?query#fragment`` from a map of
components, percent-encoding each one. Literal arguments are checked at
validation time, anything computed when resolved; a null component counts as
absent so that values of resources not created yet pass validation. Every key
is type-checked, ``fragment`` included (Appendix B #10).
Imports: stdlib, kiln.core and kiln.template.functions.base.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlencode, uses_netloc

from kiln.template.functions.base import Function, FunctionContext, resolve

URL_KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")

_PORT_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")
# Longer port text is invalid anyway, and int() refuses text over 4300 digits.
_PORT_CHARS = 100


class MakeUrl(Function):
    """``make_url: {scheme:, username:, password:, host:, port:, path:, query:, fragment:}``."""

    def validate(self, ctx: FunctionContext) -> None:
        if not isinstance(self.args, Function):
            self._check(self.args)

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        self._check(args)
        return self._build(args)

    # -- checks -------------------------------------------------------------------------------
    def _check(self, args: Any) -> None:
        """Check every literal part; calls not resolved yet are skipped."""
        if not isinstance(args, dict):
            raise self.error(f'The arguments to "{self.fn_name}" must be a map')
        unknown = [str(key) for key in args if key not in URL_KEYS]
        if unknown:
            raise self.error(f'Invalid arguments to "{self.fn_name}": {", ".join(unknown)}')
        for key, value in args.items():
            if value is None or isinstance(value, Function):
                continue
            if key == "query":
                self._check_query(value)
            elif key == "port":
                self._port_number(value, args)
            elif not isinstance(value, str):
                raise self.error(f'The "{key}" argument to "{self.fn_name}" must be a string')
        scheme = args.get("scheme")
        if isinstance(scheme, str) and ":" in scheme:
            raise self.error("URL \"scheme\" should not contain ':'")

    def _check_query(self, query: Any) -> None:
        if not isinstance(query, dict):
            raise self.error(f'The "query" argument to "{self.fn_name}" must be a map')
        for key, value in query.items():
            if not _is_scalar(key) or not (
                value is None or isinstance(value, Function) or _is_scalar(value)
            ):
                raise self.error(
                    f'The "query" argument to "{self.fn_name}" must be a map of strings'
                )

    def _port_number(self, port: Any, args: dict[Any, Any]) -> int:
        if isinstance(port, int) and not isinstance(port, bool):
            number = port
        elif isinstance(port, str) and _PORT_TEXT.fullmatch(port) and len(port) <= _PORT_CHARS:
            number = int(port)
        else:
            raise self.error(f'Invalid URL port "{port}" for {self.fn_name} called with {args!r}')
        if not 1 <= number <= 65535:
            raise self.error(f"Invalid URL port {number}, must be in range 1-65535")
        return number

    # -- assembly -----------------------------------------------------------------------------
    def _build(self, args: dict[str, Any]) -> str:
        scheme: str = args.get("scheme") or ""
        netloc = self._netloc(args)
        url = quote(args.get("path") or "", safe="/")
        query = _encode_query(args.get("query") or {})
        fragment = quote(args.get("fragment") or "")
        # Assembly as RFC 3986 section 5.3 (and current Python urlunsplit): a path
        # that could be read as an authority gets an empty one in front.
        if netloc:
            if url and not url.startswith("/"):
                url = "/" + url
            url = "//" + netloc + url
        elif url.startswith("//") or (scheme and scheme in uses_netloc and url[:1] in ("", "/")):
            url = "//" + url
        if scheme:
            url = f"{scheme}:{url}"
        if query:
            url += "?" + query
        if fragment:
            url += "#" + fragment
        return url

    def _netloc(self, args: dict[str, Any]) -> str:
        username = quote(args.get("username") or "", safe="")
        password = quote(args.get("password") or "", safe="")
        userinfo = ""
        if username or password:
            userinfo = username + (f":{password}" if password else "") + "@"
        host: str = args.get("host") or ""
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = quote(host, safe=":")
        if ":" in host:  # an IPv6 address
            host = f"[{host}]"
        port = args.get("port")
        if port is not None:
            host += f":{self._port_number(port, args)}"
        return userinfo + host


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float))  # bool is an int


def _encode_query(query: dict[Any, Any]) -> str:
    """Form encoding (spaces as ``+``), with slashes left readable."""
    pairs = [(str(key), "" if value is None else str(value)) for key, value in query.items()]
    return urlencode(pairs).replace("%2F", "/")
