"""get_param, get_resource, get_attr, get_file, resource_facade, Ref, Fn::GetAtt and the removed /
invalid-in-context sentinels (reference 1.5, 2.1-2.4, 2.19-2.21)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import (
    InvalidTemplateReference,
    KilnError,
    StackValidationFailed,
    UserParameterMissing,
)
from kiln.core.paths import Path, render_path
from kiln.template.functions.base import (
    Function,
    Parser,
    dependencies,
    resolve_top,
    validate_functions,
)
from kiln.template.functions.references import select_path
from kiln.template.inputs import build_stack
from kiln.template.versions import AWS_KEY, HEAT_CFN_KEY, HOT_DATES, HOT_KEY, get_version
from kiln.testing.heat_types import HEAT_TEST_TYPES, CreatedState

LATEST = "2021-04-16"
OUT: Path = ("outputs", "o", "value")
PROP: Path = ("resources", "b", "properties", "value")
META: Path = ("resources", "b", "metadata", "m")

PARAMS: dict[str, Any] = {
    "db": {"hosts": ["h1", "h2"], "port": 5432, "nested": {"k": ["a", {"b": "c"}]}},
    "zones": ["az1", "az2"],
    "s": "hello",
    "n": 7,
    "flag": True,
    "lst": ["x", "y"],
    "which": "port",
    "res": "v",
    "pick": "s",
    "OS::stack_name": "web",
}


class Ctx:
    """A stack with a few parameters, resources v (created) and n, files and a facade."""

    def __init__(self, created: bool = True, facade: dict[str, Any] | None = None) -> None:
        self.created = created
        self.facade_values = facade
        self.attribute_calls: list[tuple[str, str, tuple[Any, ...]]] = []
        self.files = {"file:///srv/t/boot.sh": "#!/bin/sh\n{get_file: other}\n"}

    def has_parameter(self, name: str) -> bool:
        return name in PARAMS

    def param_value(self, name: str) -> Any:
        if name not in PARAMS:
            raise UserParameterMissing(f"The Parameter ({name}) was not provided.")
        return PARAMS[name]

    def has_resource(self, name: str) -> bool:
        return name in ("v", "n")

    def resource_reference(self, name: str) -> Any:
        return f"id-{name}" if self.created else name

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        self.attribute_calls.append((name, attribute, path))
        if not self.created:
            return None
        whole = {"net": {"private": ["10.0.0.5"]}, "l": ["a", "b"]}
        return select_path(whole, path)

    def resource_attributes(self, name: str) -> Any:
        return {"value": "all"} if self.created else None

    def check_attribute(self, name: str, attribute: str) -> str | None:
        if name == "v" and attribute not in ("value", "show"):
            return f"The Referenced Attribute ({name} {attribute}) is incorrect."
        return None

    def file_content(self, key: str) -> str | None:
        return self.files.get(key)

    def condition(self, name: str) -> bool:
        raise StackValidationFailed(f'Invalid condition "{name}"')

    def facade(self, what: str) -> Any:
        if self.facade_values is None:
            raise StackValidationFailed("resource_facade is only valid in a nested template")
        return self.facade_values[what]

    def availability_zones(self) -> list[str]:
        return ["nova"]

    def mapping(self, name: str, key: str, value: str) -> Any:
        raise AssertionError("no reference function reads mappings")


def parser(version: str = LATEST, key: str = HOT_KEY) -> Parser:
    v = get_version(version, key)
    return Parser(v, v.functions, v.condition_functions, lambda raw, path: bool(raw))


def parse(data: Any, version: str = LATEST, key: str = HOT_KEY, path: Path = OUT) -> Any:
    return parser(version, key).parse(data, path)


def ev(data: Any, version: str = LATEST, key: str = HOT_KEY, ctx: Ctx | None = None) -> Any:
    return resolve_top(parse(data, version, key), ctx or Ctx())


def parse_error(data: Any, version: str = LATEST, key: str = HOT_KEY) -> KilnError:
    with pytest.raises(StackValidationFailed) as info:
        parse(data, version, key)
    return info.value


def validation_errors(
    data: Any, version: str = LATEST, key: str = HOT_KEY, path: Path = OUT
) -> list[tuple[str, str, str]]:
    errors = validate_functions(parse(data, version, key, path), Ctx())
    return [(e.kind, render_path(e.path), e.message) for e in errors]


# -- get_param -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("s", "hello"),
        ("n", 7),
        ("flag", True),
        (["db"], PARAMS["db"]),
        (["db", "hosts", 1], "h2"),  # 2.1 examples
        (["zones", "1"], "az2"),  # string index converted with int() on a list
        (["db", "port"], 5432),
        (["db", "hosts", -1], "h2"),
        (["lst", "-1"], "y"),
        (["db", "nested", "k", 1, "b"], "c"),
        (["s", 1], "e"),  # strings are indexable too
        (["s", "0"], "h"),
        (["db", {"get_param": "which"}], 5432),  # the path may be computed
        ("OS::stack_name", "web"),
    ],
)
def test_get_param(args: Any, expected: Any) -> None:
    assert ev({"get_param": args}) == expected


@pytest.mark.parametrize(
    "path",
    [
        ["db", "nope"],  # missing key
        ["db", "hosts", 5],  # index out of range
        ["db", "hosts", "x"],  # non-integer string on a list
        ["db", "port", 0],  # traversing a scalar
        ["n", 0],
        ["flag", 0],
        ["db", "hosts", 0, 0, 5],  # past the end of a string
        ["zones", 2],
        ["db", ["hosts"]],  # a path element neither string nor integer
        ["db", {"k": 1}],
        ["db", None],
        ["db", 1.0],
        ["lst", True],  # booleans are not indexes
        ["db", "hosts", 1.0],
    ],
)
def test_get_param_path_failures_are_empty_strings(path: list[Any]) -> None:
    # Quirk 2, kept: any failed step yields "", never an error.
    assert ev({"get_param": path}) == ""


@pytest.mark.parametrize(("value", "step"), [({"1": "one"}, 1), ({1: "one"}, "1")])
def test_get_param_map_keys_are_not_converted(value: dict[Any, str], step: Any) -> None:
    class MapCtx(Ctx):
        def has_parameter(self, name: str) -> bool:
            return name == "m"

        def param_value(self, name: str) -> Any:
            return value

    assert ev({"get_param": ["m", step]}, ctx=MapCtx()) == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("", 'Function "get_param" must have arguments'),
        ([], 'Function "get_param" must have arguments'),
        (None, 'Function "get_param" must have arguments'),
        ({"a": 1}, 'Argument to "get_param" must be string or list'),
        (5, 'Argument to "get_param" must be string or list'),
        ([1, "a"], 'Parameter name in "get_param" must be string'),
        ([["db"], "a"], 'Parameter name in "get_param" must be string'),
    ],
)
def test_get_param_argument_errors(args: Any, message: str) -> None:
    err = parse_error({"get_param": args})
    assert err.message == message
    assert err.path == (*OUT, "get_param")


def test_get_param_of_an_undeclared_parameter() -> None:
    # Reported at the value's path (F02: "resources.v.properties.value: ...").
    assert validation_errors({"get_param": "nope"}, path=PROP) == [
        ("StackValidationFailed", render_path(PROP), "The Parameter (nope) was not provided.")
    ]
    assert validation_errors({"get_param": ["nope", "x"]}) == [
        ("StackValidationFailed", render_path(OUT), "The Parameter (nope) was not provided.")
    ]
    with pytest.raises(UserParameterMissing, match=r"The Parameter \(nope\) was not provided."):
        ev({"get_param": "nope"})


def test_get_param_computed_name() -> None:
    assert ev({"get_param": [{"get_param": "pick"}]}) == "hello"
    assert ev({"get_param": [{"get_param": "pick"}, 1]}) == "e"
    with pytest.raises(UserParameterMissing, match=r"The Parameter \(port\) was not provided."):
        ev({"get_param": [{"get_param": "which"}]})
    with pytest.raises(StackValidationFailed) as info:
        ev({"get_param": [{"get_param": "n"}]})
    assert info.value.message == 'Parameter name in "get_param" must be string'


def test_get_param_is_a_condition_function_from_2016_10_14() -> None:
    v = get_version("2016-10-14")
    assert "get_param" in v.condition_functions
    cond = Parser(v, v.condition_functions, v.condition_functions)
    assert resolve_top(cond.parse({"get_param": "flag"}, ("conditions", "c")), Ctx()) is True


def test_get_param_in_a_property_end_to_end() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_param: nope}}}\n",
        types=HEAT_TEST_TYPES,
    )
    assert [e.full_message for e in stack.errors] == [
        "resources.v.properties.value: The Parameter (nope) was not provided."
    ]


# -- get_resource --------------------------------------------------------------------------------


def test_get_resource_is_the_reference_id_or_the_name_before_creation() -> None:
    assert ev({"get_resource": "v"}) == "id-v"
    assert ev({"get_resource": "v"}, ctx=Ctx(created=False)) == "v"
    assert ev({"get_resource": {"get_param": "res"}}) == "id-v"  # a computed name


@pytest.mark.parametrize(
    ("path", "where"),
    [
        (PROP, "b.Properties.value"),
        (("resources", "b", "properties", "nets", 0, "port"), "b.Properties.nets[0].port"),
        (META, "b.Metadata.m"),
        (OUT, "unknown"),
        (("resources", "b", "update_policy", "x"), "b"),
    ],
)
def test_get_resource_unknown_name_says_where(path: Path, where: str) -> None:
    message = f'The specified reference "ghost" (in {where}) is incorrect.'
    assert validation_errors({"get_resource": "ghost"}, path=path) == [
        ("InvalidTemplateReference", render_path((*path, "get_resource")), message)
    ]
    with pytest.raises(InvalidTemplateReference, match="ghost"):
        resolve_top(parse({"get_resource": "ghost"}, path=path), Ctx())


@pytest.mark.parametrize("args", [["v"], {"v": 1}, 5, None])
def test_get_resource_needs_a_string(args: Any) -> None:
    assert parse_error({"get_resource": args}).message == (
        'Argument to "get_resource" must be a string'
    )


def test_get_resource_dependencies() -> None:
    parsed = parse({"a": {"get_resource": "v"}, "b": [{"get_resource": "ghost"}]})
    assert dependencies(parsed, Ctx()) == {"v"}


def test_get_resource_disabled_by_a_condition() -> None:
    # K02: a resource whose condition is false is as if it did not exist.
    stack = build_stack(
        "heat_template_version: 2016-10-14\n"
        "resources:\n  a: {type: OS::Heat::None, condition: false}\n"
        "  b: {type: OS::Heat::Value, properties: {value: {get_resource: a}}}\n",
        types=HEAT_TEST_TYPES,
    )
    assert [(e.kind, e.message) for e in stack.errors] == [
        (
            "InvalidTemplateReference",
            'The specified reference "a" (in b.Properties.value) is incorrect.',
        )
    ]


# -- get_attr ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["v", "value", "net", "private", 0], "10.0.0.5"),
        (["v", "value", "net", "public", 3], None),  # a failed step is null
        (["v", "value", "l", "0"], None),  # quirk 4, kept: strings never index lists
        (["v", "value", "l", -1], "b"),
        (["v", "value", "l", True], None),
        (["v", "value", "net", ["private"]], None),  # unhashable key
        (["v", "value"], {"net": {"private": ["10.0.0.5"]}, "l": ["a", "b"]}),
    ],
)
@pytest.mark.parametrize("version", ["2013-05-23", "2014-10-16", LATEST])
def test_get_attr_paths(args: list[Any], expected: Any, version: str) -> None:
    assert ev({"get_attr": args}, version) == expected


def test_get_attr_2013_selects_after_getting_the_whole_attribute() -> None:
    # Variant a: the resource sees no path; 2014-10-16 on (b, c) hand it the path.
    old, new = Ctx(), Ctx()
    ev({"get_attr": ["v", "value", "net", "private"]}, "2013-05-23", ctx=old)
    ev({"get_attr": ["v", "value", "net", "private"]}, "2014-10-16", ctx=new)
    assert old.attribute_calls == [("v", "value", ())]
    assert new.attribute_calls == [("v", "value", ("net", "private"))]


def test_get_attr_of_a_resource_not_created_is_null() -> None:
    assert ev({"get_attr": ["v", "value", "net"]}, ctx=Ctx(created=False)) is None
    assert ev({"get_attr": ["v"]}, ctx=Ctx(created=False)) is None


@pytest.mark.parametrize("version", [d for d in HOT_DATES if d >= "2015-10-15"])
def test_get_attr_all_attributes_form(version: str) -> None:
    assert ev({"get_attr": ["v"]}, version) == {"value": "all"}


ATTR_FORM = 'Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]'
ATTR_NEXT = (
    'Arguments to "get_attr" can be of the next forms: [resource_name] or '
    "[resource_name, attribute, (path), ...]"
)


@pytest.mark.parametrize(
    ("args", "version", "message"),
    [
        (["v"], "2013-05-23", ATTR_FORM),
        (["v"], "2014-10-16", ATTR_FORM),
        (["v"], "2015-04-30", ATTR_FORM),  # F04
        ([], "2015-04-30", ATTR_FORM),
        ([], "2015-10-15", ATTR_NEXT),
        ([], LATEST, ATTR_NEXT),
        ("v", "2013-05-23", 'Argument to "get_attr" must be a list'),
        ("v", LATEST, 'Argument to "get_attr" must be a list'),  # quirk 3, Rec
        ("value", LATEST, 'Argument to "get_attr" must be a list'),
        ({"v": "value"}, LATEST, 'Argument to "get_attr" must be a list'),
        (None, LATEST, 'Argument to "get_attr" must be a list'),
    ],
)
def test_get_attr_shapes(args: Any, version: str, message: str) -> None:
    err = parse_error({"get_attr": args}, version)
    assert err.message == message
    assert err.path == (*OUT, "get_attr")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["ghost", "x"],
            (
                "InvalidTemplateReference",
                'The specified reference "ghost" (in unknown) is incorrect.',
            ),
        ),
        (
            ["ghost"],
            (
                "InvalidTemplateReference",
                'The specified reference "ghost" (in unknown) is incorrect.',
            ),
        ),
        (
            ["v", "nosuch"],
            ("StackValidationFailed", "The Referenced Attribute (v nosuch) is incorrect."),
        ),
    ],
)
def test_get_attr_validation(args: list[Any], expected: tuple[str, str]) -> None:
    assert validation_errors({"get_attr": args}) == [
        (expected[0], "outputs.o.value.get_attr", expected[1])
    ]


@pytest.mark.parametrize("args", [["v", "show"], ["n", "anything"], ["v", "value", "x", 1]])
def test_get_attr_known_attributes_validate(args: list[Any]) -> None:
    assert validation_errors({"get_attr": args}) == []


def test_get_attr_dependencies() -> None:
    parsed = parse([{"get_attr": ["v", "value"]}, {"get_attr": ["n"]}, {"get_attr": ["x", "y"]}])
    assert dependencies(parsed, Ctx()) == {"v", "n"}


def test_get_attr_end_to_end_f03() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  v: {type: OS::Heat::Value, properties: {value: {net: {private: [10.0.0.5]}}}}\n"
        "outputs:\n"
        "  ip: {value: {get_attr: [v, value, net, private, 0]}}\n"
        "  all: {value: {get_attr: [v]}}\n",
        types=HEAT_TEST_TYPES,
    )
    CreatedState().create_all(stack)
    values = {k: v.value for k, v in stack.output_values().items()}
    assert values == {"ip": "10.0.0.5", "all": {"value": {"net": {"private": ["10.0.0.5"]}}}}


# -- Fn::GetAtt and Ref --------------------------------------------------------------------------

CFN_VERSIONS = [("2010-09-09", AWS_KEY), ("2012-12-12", HEAT_CFN_KEY)]


@pytest.mark.parametrize(("version", "key"), CFN_VERSIONS)
def test_fn_getatt(version: str, key: str) -> None:
    assert ev({"Fn::GetAtt": ["v", "value"]}, version, key) == {
        "net": {"private": ["10.0.0.5"]},
        "l": ["a", "b"],
    }


@pytest.mark.parametrize("args", [["v"], ["v", "value", "net"], "v", [], {"v": "value"}])
@pytest.mark.parametrize(("version", "key"), CFN_VERSIONS)
def test_fn_getatt_takes_exactly_two(args: Any, version: str, key: str) -> None:
    err = parse_error({"Fn::GetAtt": args}, version, key)
    assert err.message == 'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]'


def test_fn_getatt_is_data_in_hot() -> None:
    assert ev({"Fn::GetAtt": ["v", "value"]}) == {"Fn::GetAtt": ["v", "value"]}


@pytest.mark.parametrize(
    ("version", "key"), [*CFN_VERSIONS, ("2013-05-23", HOT_KEY)], ids=["aws", "heat", "hot2013"]
)
@pytest.mark.parametrize(
    ("name", "expected"),
    [("v", "id-v"), ("s", "hello"), ("zones", ["az1", "az2"])],
)
def test_ref(version: str, key: str, name: str, expected: Any) -> None:
    assert ev({"Ref": name}, version, key) == expected


def test_ref_prefers_the_resource_and_depends_on_it() -> None:
    parsed = parse({"Ref": "v"}, "2010-09-09", AWS_KEY)
    assert dependencies(parsed, Ctx()) == {"v"}
    assert dependencies(parse({"Ref": "s"}, "2010-09-09", AWS_KEY), Ctx()) == set()


def test_ref_unknown_name() -> None:
    assert validation_errors({"Ref": "ghost"}, "2010-09-09", AWS_KEY, PROP) == [
        (
            "InvalidTemplateReference",
            "resources.b.properties.value.Ref",
            'The specified reference "ghost" (in unknown) is incorrect.',
        )
    ]
    with pytest.raises(InvalidTemplateReference):
        ev({"Ref": "ghost"}, "2010-09-09", AWS_KEY)


def test_ref_in_aws_conditions_reads_parameters_only() -> None:
    v = get_version("2010-09-09", AWS_KEY)
    cond = Parser(v, v.condition_functions, v.condition_functions)
    assert resolve_top(cond.parse({"Ref": "s"}, ("Conditions", "c")), Ctx()) == "hello"
    parsed = cond.parse({"Ref": "v"}, ("Conditions", "c"))
    assert dependencies(parsed, Ctx()) == set()
    errors = validate_functions(parsed, Ctx())
    assert [(e.kind, e.message) for e in errors] == [
        ("InvalidTemplateReference", 'The specified reference "v" (in unknown) is incorrect.')
    ]
    with pytest.raises(InvalidTemplateReference):
        resolve_top(parsed, Ctx())


# -- get_file ------------------------------------------------------------------------------------


def test_get_file_returns_the_entry_verbatim() -> None:
    # F06: content that looks like a template or a function is not parsed.
    assert ev({"get_file": "file:///srv/t/boot.sh"}) == "#!/bin/sh\n{get_file: other}\n"


@pytest.mark.parametrize("key", ["boot.sh", "/srv/t/boot.sh", "file:///srv/t/./boot.sh"])
def test_get_file_key_must_match_exactly(key: str) -> None:
    message = f'No content found in the "files" section for get_file path: {key}'
    assert validation_errors({"get_file": key}) == [
        ("StackValidationFailed", "outputs.o.value.get_file", message)
    ]
    with pytest.raises(StackValidationFailed, match="No content found"):
        ev({"get_file": key})


@pytest.mark.parametrize("args", [["a"], {"a": 1}, 5, None])
def test_get_file_needs_a_string(args: Any) -> None:
    assert parse_error({"get_file": args}).message == 'Argument to "get_file" must be a string'


def test_get_file_key_computed_by_a_function() -> None:
    parsed = parse({"get_file": {"get_param": "s"}})
    assert validate_functions(parsed, Ctx()) == []  # not known until resolved
    with pytest.raises(StackValidationFailed, match="get_file path: hello"):
        resolve_top(parsed, Ctx())
    with pytest.raises(StackValidationFailed, match='Argument to "get_file" must be a string'):
        ev({"get_file": {"get_param": "n"}})


def test_get_file_end_to_end_f07() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_file: nothere.sh}}}\n",
        types=HEAT_TEST_TYPES,
        files={"file:///srv/nothere.sh": "x"},
    )
    assert [e.message for e in stack.errors] == [
        'No content found in the "files" section for get_file path: nothere.sh'
    ]


# -- resource_facade -----------------------------------------------------------------------------

FACADE = {"metadata": {"role": "db"}, "deletion_policy": "Retain", "update_policy": {}}


@pytest.mark.parametrize(
    ("data", "version", "key", "expected"),
    [
        ({"resource_facade": "metadata"}, LATEST, HOT_KEY, {"role": "db"}),
        ({"resource_facade": "deletion_policy"}, LATEST, HOT_KEY, "Retain"),
        ({"resource_facade": "update_policy"}, "2013-05-23", HOT_KEY, {}),
        ({"Fn::ResourceFacade": "Metadata"}, "2013-05-23", HOT_KEY, {"role": "db"}),
        ({"Fn::ResourceFacade": "DeletionPolicy"}, "2010-09-09", AWS_KEY, "Retain"),
        ({"Fn::ResourceFacade": "UpdatePolicy"}, "2012-12-12", HEAT_CFN_KEY, {}),
    ],
)
def test_resource_facade(data: Any, version: str, key: str, expected: Any) -> None:
    assert ev(data, version, key, ctx=Ctx(facade=FACADE)) == expected


@pytest.mark.parametrize(
    ("data", "version", "key", "message"),
    [
        (
            {"resource_facade": "Metadata"},
            LATEST,
            HOT_KEY,
            'Incorrect arguments to "resource_facade" should be one of: '
            "metadata, deletion_policy, update_policy",
        ),
        (
            {"resource_facade": ["metadata"]},
            LATEST,
            HOT_KEY,
            'Incorrect arguments to "resource_facade" should be one of: '
            "metadata, deletion_policy, update_policy",
        ),
        (
            {"resource_facade": "properties"},
            "2013-05-23",
            HOT_KEY,
            'Incorrect arguments to "resource_facade" should be one of: '
            "metadata, deletion_policy, update_policy",
        ),
        (
            {"Fn::ResourceFacade": "metadata"},
            "2010-09-09",
            AWS_KEY,
            'Incorrect arguments to "Fn::ResourceFacade" should be one of: '
            "Metadata, DeletionPolicy, UpdatePolicy",
        ),
    ],
)
def test_resource_facade_argument_is_checked_when_parsed(
    data: Any, version: str, key: str, message: str
) -> None:
    assert parse_error(data, version, key).message == message


def test_resource_facade_at_top_level_is_a_validation_error() -> None:
    # Quirk 14, Rec.
    with pytest.raises(StackValidationFailed, match="only valid in a nested template"):
        ev({"resource_facade": "metadata"}, ctx=Ctx(facade=None))


# -- removed functions ---------------------------------------------------------------------------

REMOVED_2014 = [
    ("Ref", "x"),
    ("Fn::GetAZs", ""),
    ("Fn::Join", [",", ["a"]]),
    ("Fn::Split", [",", "a"]),
    ("Fn::Replace", [{"a": "b"}, "a"]),
    ("Fn::Base64", "x"),
    ("Fn::MemberListToMap", ["N", "V", []]),
    ("Fn::ResourceFacade", "Metadata"),
]


def removed_message(name: str) -> str:
    return (
        f"The template version is invalid: The function {name} is not supported in this "
        "version of HOT."
    )


@pytest.mark.parametrize(("name", "args"), REMOVED_2014)
@pytest.mark.parametrize("version", [d for d in HOT_DATES if d >= "2014-10-16"])
def test_removed_cfn_functions(name: str, args: Any, version: str) -> None:
    parsed = parse({name: args}, version)  # parses fine ...
    assert isinstance(parsed, Function)
    assert validation_errors({name: args}, version) == [  # ... fails validation
        ("StackValidationFailed", f"outputs.o.value.{name}", removed_message(name))
    ]
    with pytest.raises(StackValidationFailed, match="is not supported in this version of HOT"):
        resolve_top(parsed, Ctx())


@pytest.mark.parametrize(
    ("version", "removed"),
    [
        ("2013-05-23", False),
        ("2014-10-16", False),
        ("2015-04-30", False),
        ("2015-10-15", True),
        (LATEST, True),
    ],
)
def test_fn_select_removed_from_2015_10_15(version: str, removed: bool) -> None:
    errors = validation_errors({"Fn::Select": [1, ["a", "b"]]}, version)
    if removed:
        assert errors == [
            ("StackValidationFailed", "outputs.o.value.Fn::Select", removed_message("Fn::Select"))
        ]
    else:
        assert errors == []
        assert ev({"Fn::Select": [1, ["a", "b"]]}, version) == "b"


def test_removed_functions_stay_removed_in_condition_contexts() -> None:
    stack = build_stack(
        "heat_template_version: 2016-10-14\nconditions:\n  c: {equals: [{Ref: x}, 1]}\n"
    )
    assert [render_path(e.path) for e in stack.errors] == ["conditions.c.equals[0].Ref"]
    assert stack.errors[0].message == removed_message("Ref")


def test_removed_function_is_a_validation_error_end_to_end_v07() -> None:
    stack = build_stack(
        "heat_template_version: 2014-10-16\noutputs:\n  o: {value: {'Fn::Join': [',', [a, b]]}}\n"
    )
    assert [e.full_message for e in stack.errors] == [
        f"outputs.o.value.Fn::Join: {removed_message('Fn::Join')}"
    ]


# -- functions invalid in condition contexts ----------------------------------------------------

INVALID_HERE = [
    ("get_attr", ["r", "a"]),
    ("get_resource", "r"),
    ("get_file", "f"),
    ("resource_facade", "metadata"),
    ("str_replace", {"template": "x", "params": {}}),
    ("list_join", [",", []]),
    ("if", [True, 1, 2]),
    ("map_merge", [{}]),
]


@pytest.mark.parametrize(("name", "args"), INVALID_HERE)
@pytest.mark.parametrize("version", ["2016-10-14", LATEST])
def test_ordinary_functions_are_invalid_in_condition_contexts(
    name: str, args: Any, version: str
) -> None:
    v = get_version(version)
    cond = Parser(v, v.condition_functions, v.condition_functions)
    path: Path = ("conditions", "c", "equals", 0)
    with pytest.raises(StackValidationFailed) as info:
        cond.parse({name: args}, path)
    assert info.value.message == f'The function "{name}" is invalid in this context'
    assert info.value.path == (*path, name)


@pytest.mark.parametrize(
    ("version", "invalid"), [("2016-10-14", True), ("2017-02-24", True), ("2017-09-01", False)]
)
@pytest.mark.parametrize("name", ["yaql", "contains"])
def test_yaql_and_contains_become_condition_functions_in_2017_09_01(
    version: str, invalid: bool, name: str
) -> None:
    v = get_version(version)
    if name == "contains" and version < "2017-09-01":
        assert name not in v.condition_functions  # unknown there: plain data
        return
    args: Any = {"expression": "true"} if name == "yaql" else ["a", ["a"]]
    cond = Parser(v, v.condition_functions, v.condition_functions)
    if invalid:
        with pytest.raises(StackValidationFailed, match="invalid in this context"):
            cond.parse({name: args}, ("conditions", "c"))
    else:
        assert resolve_top(cond.parse({name: args}, ("conditions", "c")), Ctx()) is True


def test_unknown_names_in_condition_contexts_are_data() -> None:
    v = get_version(LATEST)
    cond = Parser(v, v.condition_functions, v.condition_functions)
    assert cond.parse({"no_such_fn": 1}, ("conditions", "c")) == {"no_such_fn": 1}
