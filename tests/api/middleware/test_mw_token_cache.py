"""The token cache keystonemiddleware uses in ``kiln all``, flushed by the identity service."""

from __future__ import annotations

from kiln.api.middleware.token_cache import ENV_KEY, ProvideTokenCache, TokenCache


def test_memcached_subset_and_clear() -> None:
    cache = TokenCache()
    assert cache.get("t") is None
    cache.set("t", "data", time=300)
    assert cache.get("t") == "data"
    assert not cache.add("t", "other")
    assert cache.add("u", "more")
    cache.delete("u")
    assert cache.get("u") is None
    cache.clear()
    assert cache.get("t") is None


def test_entries_expire() -> None:
    cache = TokenCache()
    cache.set("t", "data", time=-1)  # already past its time
    assert cache.get("t") is None


def test_the_middleware_puts_the_cache_in_the_environ() -> None:
    cache = TokenCache()
    seen = {}

    def app(environ, start_response):
        seen["cache"] = environ[ENV_KEY]
        return [b""]

    ProvideTokenCache(app, cache)({}, lambda *a: None)
    assert seen["cache"] is cache
