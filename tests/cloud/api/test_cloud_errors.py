"""The cloud error tree: one class per HTTP status family, Heat's classification."""

from __future__ import annotations

from kiln.cloud.api.errors import (
    BadRequest,
    Conflict,
    NotFound,
    OverLimit,
    Unavailable,
    error_for_status,
    is_transient,
)


def test_statuses_map_to_the_error_classes() -> None:
    assert type(error_for_status(400, "x")) is BadRequest
    assert type(error_for_status(404, "x")) is NotFound
    assert type(error_for_status(409, "x")) is Conflict
    assert type(error_for_status(413, "x")) is OverLimit
    assert type(error_for_status(429, "x")) is OverLimit
    assert type(error_for_status(502, "x")) is Unavailable
    assert error_for_status(418, "x").http_status == 418


def test_neutron_over_quota_is_over_limit_not_a_conflict() -> None:
    error = error_for_status(409, "Quota exceeded", kind="OverQuota", service="network")
    assert isinstance(error, OverLimit)
    assert error.http_status == 409 and error.kind == "OverQuota"
    assert not is_transient(error)


def test_describe_shows_class_message_and_status() -> None:
    error = error_for_status(404, "Network x could not be found.", kind="NetworkNotFound")
    assert error.describe() == "NotFound: Network x could not be found. (HTTP 404)"
    assert str(error) == "Network x could not be found."
