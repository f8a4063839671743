"""The WSGI middleware in front of the native API's routes (heat-api.md 1.2).

``kiln.api.pipeline`` composes them in Heat's order. keystonemiddleware and
oslo.middleware are built on WebOb, whose 1.8 releases import the ``cgi``
module and so raise a DeprecationWarning on Python 3.11+; it is WebOb's, not
something Kiln can act on, so the import is silenced here, once, for exactly
that message (tests run with warnings as errors).
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "'cgi' is deprecated", DeprecationWarning)
    import webob  # noqa: F401
