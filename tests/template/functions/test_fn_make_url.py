"""Tests of make_url (reference 2.14)."""

from __future__ import annotations

from typing import Any

import pytest
from fn_strings_support import PATH, ev, fails, validation_errors


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            {
                "scheme": "https",
                "host": "example.org",
                "port": 8443,
                "path": "/a b",
                "query": {"q": "x y"},
                "fragment": "top",
            },
            "https://example.org:8443/a%20b?q=x+y#top",
        ),
        ({"scheme": "http", "host": "::1", "path": "/"}, "http://[::1]/"),
        ({"scheme": "http", "host": "[::1]", "port": "8080"}, "http://[::1]:8080"),
        ({"scheme": "http", "host": "fe80::1%eth0"}, "http://[fe80::1%25eth0]"),
        (
            {"scheme": "https", "username": "u@x", "password": "p:w", "host": "h"},
            "https://u%40x:p%3Aw@h",
        ),
        ({"scheme": "ftp", "username": "a/b c", "host": "h"}, "ftp://a%2Fb%20c@h"),
        ({"scheme": "ftp", "password": "pw", "host": "h"}, "ftp://:pw@h"),
        ({"scheme": "ftp", "username": "u", "password": "", "host": "h"}, "ftp://u@h"),
        ({"scheme": "http", "host": "h", "path": "a/b"}, "http://h/a/b"),
        ({"scheme": "http", "host": "h", "path": "/é/%"}, "http://h/%C3%A9/%25"),
        ({"scheme": "http", "host": "h s"}, "http://h%20s"),
        (
            {"scheme": "http", "host": "h", "query": {"path": "/a/b", "x": "1&2=3", "y": None}},
            "http://h?path=/a/b&x=1%262%3D3&y=",
        ),
        ({"scheme": "http", "host": "h", "query": {"n": 1, "b": True}}, "http://h?n=1&b=True"),
        ({"scheme": "http", "host": "h", "query": {}}, "http://h"),
        ({"scheme": "http", "host": "h", "fragment": "a b/c"}, "http://h#a%20b/c"),
        ({"scheme": "http", "host": "h", "port": " 80 "}, "http://h:80"),
        ({"path": "/x y", "query": {"a": "b"}}, "/x%20y?a=b"),
        ({"host": "h", "path": "p"}, "//h/p"),
        ({}, ""),
        # a null component (an attribute not available yet) counts as absent
        ({"scheme": "http", "host": "h", "port": None, "path": None}, "http://h"),
        ({"scheme": "http", "host": {"not_yet": "r"}, "path": "/p"}, "http:///p"),
        ({"scheme": "http", "host": {"echo": "h"}, "port": {"echo": "81"}}, "http://h:81"),
    ],
)
def test_make_url(args: dict[str, Any], expected: str) -> None:
    assert ev({"make_url": args}) == expected
    assert validation_errors({"make_url": args}) == []


def test_make_url_argument_may_be_computed() -> None:
    assert ev({"make_url": {"echo": {"scheme": "http", "host": "h"}}}) == "http://h"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("http://h", 'The arguments to "make_url" must be a map'),
        (["http"], 'The arguments to "make_url" must be a map'),
        ({"scheme": "http", "user": "u"}, 'Invalid arguments to "make_url": user'),
        ({"query": "a=b"}, 'The "query" argument to "make_url" must be a map'),
        ({"query": {"a": ["b"]}}, 'The "query" argument to "make_url" must be a map of strings'),
        ({"host": 1}, 'The "host" argument to "make_url" must be a string'),
        ({"path": ["a"]}, 'The "path" argument to "make_url" must be a string'),
        ({"scheme": True}, 'The "scheme" argument to "make_url" must be a string'),
        ({"username": 1}, 'The "username" argument to "make_url" must be a string'),
        ({"password": {"a": 1}}, 'The "password" argument to "make_url" must be a string'),
        ({"fragment": 3}, 'The "fragment" argument to "make_url" must be a string'),
        # Appendix B #10: fragment is checked even when query is present
        ({"query": {"a": "b"}, "fragment": 3}, 'The "fragment" argument to "make_url"'),
        ({"scheme": "http:", "host": "h"}, "URL \"scheme\" should not contain ':'"),
        ({"host": "h", "port": 70000}, "Invalid URL port 70000, must be in range 1-65535"),
        ({"host": "h", "port": "0"}, "Invalid URL port 0, must be in range 1-65535"),
        ({"host": "h", "port": -1}, "Invalid URL port -1, must be in range 1-65535"),
        ({"host": "h", "port": "http"}, 'Invalid URL port "http" for make_url called with'),
        # fuzz finding: int() refused 5000 digits with a ValueError
        ({"host": "h", "port": "9" * 5000}, 'Invalid URL port "9999'),
        ({"host": "h", "port": "80.0"}, 'Invalid URL port "80.0" for make_url called with'),
        ({"host": "h", "port": 80.0}, 'Invalid URL port "80.0" for make_url called with'),
        ({"host": "h", "port": True}, 'Invalid URL port "True" for make_url called with'),
        ({"host": "h", "port": ""}, 'Invalid URL port "" for make_url called with'),
    ],
)
def test_make_url_errors_with_literal_arguments_found_at_validation(
    args: Any, message: str
) -> None:
    errors = validation_errors({"make_url": args})
    assert len(errors) == 1
    assert message in errors[0].message
    assert errors[0].path == (*PATH, "make_url")
    fails({"make_url": args}, message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"echo": "http://h"}, 'The arguments to "make_url" must be a map'),
        ({"echo": {"scheme": "http", "bad": 1}}, 'Invalid arguments to "make_url": bad'),
        ({"host": "h", "port": {"echo": 70000}}, "Invalid URL port 70000"),
        ({"host": {"echo": 5}}, 'The "host" argument to "make_url" must be a string'),
        ({"query": {"echo": "q"}}, 'The "query" argument to "make_url" must be a map'),
        ({"query": {"a": {"echo": ["x"]}}}, 'The "query" argument to "make_url" must be a map'),
        ({"scheme": {"echo": "a:b"}}, "URL \"scheme\" should not contain ':'"),
    ],
)
def test_make_url_errors_in_computed_parts_found_when_resolved(args: Any, message: str) -> None:
    assert validation_errors({"make_url": args}) == []
    fails({"make_url": args}, message)


def test_make_url_port_message_names_the_arguments() -> None:
    err = fails({"make_url": {"host": "h", "port": "x"}}, "Invalid URL port")
    assert "'host': 'h'" in err.message
