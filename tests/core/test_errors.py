"""The error tree: rendering (reference 8.5), locating, kinds, HTTP statuses, several at once."""

from __future__ import annotations

import pytest

from kiln.core import errors as E
from kiln.core.paths import Location, Path

HERE = Location("t.yaml", 4, 9)


@pytest.mark.parametrize(
    ("category", "path", "full"),
    [
        (None, (), "boom"),
        (None, ("outputs", "o", "value", "get_attr"), "outputs.o.value.get_attr: boom"),
        ("Property error", (), "Property error: boom"),
        (
            "Property error",
            ("resources", "web", "properties", "networks", 0, "port"),
            "Property error: resources.web.properties.networks[0].port: boom",
        ),
        ("", ("a",), "a: boom"),  # an empty category is no category
    ],
)
def test_full_message_is_category_path_message(category: str | None, path: Path, full: str) -> None:
    err = E.StackValidationFailed("boom", path=path, category=category)
    assert err.full_message == full
    assert str(err) == full
    assert err.message == "boom"  # the bare message is kept apart


def test_path_is_stored_as_a_tuple() -> None:
    err = E.StackValidationFailed("m", path=["a", 0])  # type: ignore[arg-type]
    assert err.path == ("a", 0)


@pytest.mark.parametrize(
    ("start", "segments", "expected"),
    [
        ((), ("resources", "a"), ("resources", "a")),
        (("value",), ("outputs", "o"), ("outputs", "o", "value")),
        (("x", 0), ("properties",), ("properties", "x", 0)),
        (("x",), (), ("x",)),
    ],
)
def test_within_prefixes_the_path(start: Path, segments: Path, expected: Path) -> None:
    err = E.StackValidationFailed("m", path=start)
    assert err.within(*segments) is err
    assert err.path == expected


def test_within_applied_twice_nests_outwards() -> None:
    err = E.StackValidationFailed("m", path=("p",)).within("properties").within("resources", "r")
    assert err.full_message == "resources.r.properties.p: m"


def test_with_category_keeps_the_first_one() -> None:
    err = E.StackValidationFailed("m")
    assert err.with_category("Property error") is err
    err.with_category("Output validation error")
    assert err.category == "Property error"
    assert err.full_message == "Property error: m"


def test_locate_asks_the_finder_for_the_path() -> None:
    asked: list[Path] = []

    def finder(path: Path) -> Location | None:
        asked.append(path)
        return HERE

    err = E.StackValidationFailed("m", path=("resources", "a"))
    assert err.locate(finder) is err
    assert err.location == HERE
    assert asked == [("resources", "a")]


def test_locate_keeps_a_known_location() -> None:
    known = Location("other.yaml", 1, 1)
    err = E.StackValidationFailed("m", path=("a",), location=known)
    err.locate(lambda path: pytest.fail("the finder must not be asked"))
    assert err.location is known


def test_locate_without_a_path_does_nothing() -> None:
    err = E.StackValidationFailed("m")
    err.locate(lambda path: pytest.fail("the finder must not be asked"))
    assert err.location is None


def test_locate_accepts_an_unknown_position() -> None:
    err = E.StackValidationFailed("m", path=("a",))
    err.locate(lambda path: None)
    assert err.location is None


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (
            E.StackValidationFailed(
                "boom", path=("resources", "a", 0), category="Property error", location=HERE
            ),
            {
                "type": "StackValidationFailed",
                "message": "Property error: resources.a[0]: boom",
                "path": "resources.a[0]",
                "location": "t.yaml:4:9",
            },
        ),
        (
            E.InvalidTemplateVersion("Template version was not provided"),
            {
                "type": "InvalidTemplateVersion",
                "message": "Template version was not provided",
                "path": None,
                "location": None,
            },
        ),
    ],
)
def test_to_dict(err: E.KilnError, expected: dict[str, object]) -> None:
    assert err.to_dict() == expected


HEAT_KINDS = [
    E.TemplateParseError,
    E.EnvironmentParseError,
    E.StackValidationFailed,
    E.InvalidTemplateVersion,
    E.InvalidTemplateSection,
    E.InvalidTemplateReference,
    E.InvalidTemplateAttribute,
    E.InvalidSchemaError,
    E.UnknownUserParameter,
    E.UserParameterMissing,
    E.RequestLimitExceeded,
    E.CircularDependencyException,
    E.ImmutableParameterModified,
    E.InvalidBreakPointHook,
    E.InvalidRestrictedAction,
    E.InvalidExternalResourceDependency,
    E.ConflictingMergeStrategyForParam,
    E.InvalidMergeStrategyForParam,
    E.NotSupported,
]


@pytest.mark.parametrize("cls", HEAT_KINDS, ids=lambda c: c.__name__)
def test_user_errors_are_400_and_named_after_heat(cls: type[E.KilnError]) -> None:
    err = cls("m")
    assert isinstance(err, E.UserError)
    assert err.kind == cls.__name__
    assert err.http_status == 400


@pytest.mark.parametrize(
    ("cls", "status"), [(E.KilnError, 500), (E.InternalError, 500), (E.UserError, 400)]
)
def test_base_statuses(cls: type[E.KilnError], status: int) -> None:
    assert cls.http_status == status


def test_internal_errors_are_not_the_users_fault() -> None:
    assert not issubclass(E.InternalError, E.UserError)
    assert E.InternalError("bug").kind == "InternalError"


# -- several errors at once -------------------------------------------------------------------


def _two() -> list[E.KilnError]:
    return [
        E.InvalidTemplateReference(
            'The specified reference "x" (in a) is incorrect.',
            path=("resources", "a", "depends_on"),
            location=HERE,
        ),
        E.StackValidationFailed("Unknown Property p", category="Property error"),
    ]


def test_validation_failed_joins_every_message() -> None:
    err = E.ValidationFailed(_two())
    assert err.full_message == (
        'resources.a.depends_on: The specified reference "x" (in a) is incorrect.\n'
        "Property error: Unknown Property p"
    )
    assert str(err) == err.full_message


def test_validation_failed_takes_kind_and_location_of_the_first() -> None:
    err = E.ValidationFailed(_two())
    assert err.kind == "InvalidTemplateReference"
    assert err.location == HERE
    assert err.http_status == 400
    assert [e.kind for e in err.errors] == ["InvalidTemplateReference", "StackValidationFailed"]


def test_validation_failed_to_dict_lists_every_error() -> None:
    errors = _two()
    out = E.ValidationFailed(errors).to_dict()
    assert out["type"] == "InvalidTemplateReference"
    assert out["message"] == "\n".join(e.full_message for e in errors)
    assert out["errors"] == [e.to_dict() for e in errors]


def test_validation_failed_needs_an_error() -> None:
    with pytest.raises(ValueError, match="at least one error"):
        E.ValidationFailed([])


def test_validation_failed_copies_its_input() -> None:
    errors = _two()
    err = E.ValidationFailed(errors)
    errors.clear()
    assert len(err.errors) == 2


def test_raise_all_nothing() -> None:
    E.raise_all([])
    E.raise_all(iter(()))


def test_raise_all_one_error_raises_it_unchanged() -> None:
    only = E.UserParameterMissing("The Parameter (p) was not provided.")
    with pytest.raises(E.UserParameterMissing) as info:
        E.raise_all([only])
    assert info.value is only


def test_raise_all_several_raises_validation_failed() -> None:
    errors = _two()
    with pytest.raises(E.ValidationFailed) as info:
        E.raise_all(e for e in errors)  # any iterable
    assert info.value.errors == errors
