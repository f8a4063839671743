"""Environments: parsing (6.1), event sinks (6.7), merging files (6.3), child envs (7.3)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import (
    ConflictingMergeStrategyForParam,
    EnvironmentParseError,
    InvalidBreakPointHook,
    InvalidMergeStrategyForParam,
    InvalidRestrictedAction,
    StackValidationFailed,
)
from kiln.template.environment import (
    Environment,
    merge_environment_files,
    parse_environment,
)
from kiln.template.registry import ResourceRegistry


def builtin(name: str) -> bool:
    return name.startswith("OS::")


# -- 6.1 format and sections ------------------------------------------------------------------


@pytest.mark.parametrize("data", [None, {}])
def test_empty_environment(data: Any) -> None:
    env = parse_environment(data)
    assert env.parameters == {}
    assert env.parameter_defaults == {}
    assert env.event_sinks == []
    assert env.encrypted_param_names == []
    assert env.parameter_merge_strategies == {}
    assert env.to_dict() == {
        "parameters": {},
        "parameter_defaults": {},
        "resource_registry": {"resources": {}},
        "event_sinks": [],
    }


def test_all_sections() -> None:
    env = parse_environment(
        {
            "parameters": {"flavor": "m1.small"},
            "parameter_defaults": {"size": 3},
            "resource_registry": {"My::T": "OS::Heat::None"},
            "event_sinks": [{"type": "zaqar-queue", "target": "q", "ttl": 60}],
            "parameter_merge_strategies": {"default": "merge", "size": "overwrite"},
            "encrypted_param_names": ["flavor"],
        }
    )
    assert env.parameters == {"flavor": "m1.small"}
    assert env.parameter_defaults == {"size": 3}
    assert env.registry.resolve("My::T", "r", builtin).target == "OS::Heat::None"
    assert env.event_sinks == [{"type": "zaqar-queue", "target": "q", "ttl": 60}]
    assert env.parameter_merge_strategies == {"default": "merge", "size": "overwrite"}
    assert env.encrypted_param_names == ["flavor"]


@pytest.mark.parametrize(
    ("data", "message", "path"),
    [
        ("just text", "The environment is not a valid YAML mapping data type.", ()),
        ([1, 2], "The environment is not a valid YAML mapping data type.", ()),
        ({"parameterz": {}}, 'environment has wrong section "parameterz"', ("parameterz",)),
        ({"resources": {}}, 'environment has wrong section "resources"', ("resources",)),
        ({"parameters": None}, 'environment has empty section "parameters"', ("parameters",)),
        (
            {"resource_registry": None},
            'environment has empty section "resource_registry"',
            ("resource_registry",),
        ),
        ({"event_sinks": None}, 'environment has empty section "event_sinks"', ("event_sinks",)),
        ({"parameters": [1]}, 'section "parameters" must be a map', ("parameters",)),
        (
            {"parameter_defaults": "x"},
            'section "parameter_defaults" must be a map',
            ("parameter_defaults",),
        ),
        (
            {"parameter_merge_strategies": ["merge"]},
            'section "parameter_merge_strategies" must be a map',
            ("parameter_merge_strategies",),
        ),
        ({"parameters": {1: "x"}}, "non-string name", ("parameters",)),
        (
            {"encrypted_param_names": "a"},
            'section "encrypted_param_names" must be a list',
            ("encrypted_param_names",),
        ),
        (
            {"encrypted_param_names": ["a", 1]},
            "Parameter names must be strings",
            ("encrypted_param_names", 1),
        ),
        ({"event_sinks": {"type": "zaqar-queue"}}, "must be a list", ("event_sinks",)),
        (
            {"resource_registry": "My::T"},
            '"resource_registry" must be a map',
            ("resource_registry",),
        ),
    ],
)
def test_parse_errors(data: Any, message: str, path: tuple[Any, ...]) -> None:
    with pytest.raises(EnvironmentParseError) as info:
        parse_environment(data)
    assert message in info.value.message
    assert info.value.path == path


def test_hook_errors_when_the_environment_is_loaded() -> None:
    # E02
    with pytest.raises(InvalidBreakPointHook) as info:
        parse_environment({"resource_registry": {"resources": {"a": {"hooks": "pre-creat"}}}})
    assert 'Invalid hook type "pre-creat"' in info.value.message
    assert info.value.path == ("resource_registry", "resources", "a", "hooks")
    with pytest.raises(InvalidRestrictedAction):
        parse_environment(
            {"resource_registry": {"resources": {"a": {"restricted_actions": "create"}}}}
        )


def test_named_environment_errors_carry_the_name() -> None:
    with pytest.raises(EnvironmentParseError) as info:
        parse_environment({"bogus": 1}, name="env/extra.yaml")
    assert info.value.category == "env/extra.yaml"
    assert info.value.full_message.startswith("env/extra.yaml: bogus: ")
    with pytest.raises(EnvironmentParseError) as unnamed:
        parse_environment({"bogus": 1})
    assert unnamed.value.category is None


def test_parse_uses_the_global_registry() -> None:
    glob = ResourceRegistry({"G::T": "OS::Heat::Value"}, system=True)
    env = parse_environment({"resource_registry": {"U::T": "G::T"}}, global_registry=glob)
    assert env.registry.parent is glob
    assert env.registry.resolve("U::T", "r", builtin).target == "OS::Heat::Value"
    assert env.to_dict()["resource_registry"] == {"U::T": "G::T", "resources": {}}


def test_parse_does_not_alias_its_input() -> None:
    data: dict[str, Any] = {"parameters": {"p": [1]}, "parameter_defaults": {"d": {"k": 1}}}
    env = parse_environment(data)
    data["parameters"]["p"].append(2)
    data["parameter_defaults"]["d"]["k"] = 2
    assert env.parameters == {"p": [1]}
    assert env.parameter_defaults == {"d": {"k": 1}}


# -- 6.7 event_sinks and encrypted_param_names ------------------------------------------------


@pytest.mark.parametrize(
    "sink",
    [
        {"type": "zaqar-queue", "target": "heat-events"},
        {"type": "zaqar-queue", "target": "heat-events", "ttl": 86400},
        {"type": "zaqar-queue", "target": "q", "ttl": 0},
    ],
)
def test_valid_event_sinks(sink: dict[str, Any]) -> None:
    assert parse_environment({"event_sinks": [sink]}).event_sinks == [sink]


@pytest.mark.parametrize(
    ("sink", "message", "path"),
    [
        # Appendix A-13: target_queue is not an argument of zaqar-queue
        (
            {"type": "zaqar-queue", "target_queue": "heat-events", "ttl": 86400},
            'Unknown argument "target_queue"',
            ("event_sinks", 0, "target_queue"),
        ),
        ({"type": "zaqar-queue"}, 'requires the argument "target"', ("event_sinks", 0)),
        ({"type": "webhook", "target": "x"}, 'Unknown event sink type "webhook"', None),
        ({"target": "x"}, 'Unknown event sink type "None"', ("event_sinks", 0, "type")),
        # evaluator fuzz finding: an unhashable type raised TypeError
        (
            {"type": ["zaqar-queue"], "target": "x"},
            "Unknown event sink type \"['zaqar-queue']\"",
            ("event_sinks", 0, "type"),
        ),
        ({"type": {}, "target": "x"}, 'Unknown event sink type "{}"', None),
        ("zaqar-queue", "An event sink must be a map", ("event_sinks", 0)),
        ({"type": "zaqar-queue", "target": ""}, "non-empty string", ("event_sinks", 0, "target")),
        ({"type": "zaqar-queue", "target": 5}, "non-empty string", ("event_sinks", 0, "target")),
        ({"type": "zaqar-queue", "target": "q", "ttl": "60"}, "ttl", ("event_sinks", 0, "ttl")),
        ({"type": "zaqar-queue", "target": "q", "ttl": -1}, "ttl", ("event_sinks", 0, "ttl")),
        ({"type": "zaqar-queue", "target": "q", "ttl": True}, "ttl", ("event_sinks", 0, "ttl")),
    ],
)
def test_invalid_event_sinks(sink: Any, message: str, path: tuple[Any, ...] | None) -> None:
    with pytest.raises(EnvironmentParseError) as info:
        parse_environment({"event_sinks": [sink]})
    assert message in info.value.message
    if path is not None:
        assert info.value.path == path


def test_to_dict_never_shows_encrypted_param_names() -> None:
    env = parse_environment({"parameters": {"pw": "<ciphertext>"}, "encrypted_param_names": ["pw"]})
    shown = env.to_dict()
    assert "encrypted_param_names" not in shown
    assert "parameter_merge_strategies" not in shown
    assert shown["parameters"] == {"pw": "<ciphertext>"}


def test_to_dict_is_a_copy() -> None:
    env = parse_environment({"parameters": {"p": [1]}})
    env.to_dict()["parameters"]["p"].append(2)
    assert env.parameters == {"p": [1]}


# -- 7.3 child environments ---------------------------------------------------------------


def test_child_environment() -> None:
    glob = ResourceRegistry({"G::T": "OS::Heat::Value"}, system=True)
    env = parse_environment(
        {
            "parameters": {"top": "only"},
            "parameter_defaults": {"size": 5},
            "resource_registry": {
                "My::Box": "box.yaml",
                "My::Other": "other.yaml",
                "resources": {"n": {"inner": {"hooks": "pre-create"}}, "m": {"x": {}}},
            },
            "event_sinks": [{"type": "zaqar-queue", "target": "q"}],
            "encrypted_param_names": ["top"],
            "parameter_merge_strategies": {"default": "merge"},
        },
        global_registry=glob,
    )
    child = env.child("n", {"size": 3, "label": "x"}, exclude_type="My::Box")
    assert child.parameters == {"size": 3, "label": "x"}
    assert child.parameter_defaults == {"size": 5}
    assert child.event_sinks == [{"type": "zaqar-queue", "target": "q"}]
    assert child.encrypted_param_names == []
    assert child.parameter_merge_strategies == {}
    assert child.registry.resolve("My::Box", "r", builtin).kind == "missing"
    assert child.registry.resolve("My::Other", "r", builtin).target == "other.yaml"
    assert child.registry.resolve("G::T", "r", builtin).target == "OS::Heat::Value"
    assert child.registry.hooks_for("inner") == frozenset({"pre-create"})
    assert child.to_dict()["resource_registry"] == {
        "My::Other": "other.yaml",
        "resources": {"inner": {"hooks": "pre-create"}},
    }
    # the parent is unchanged and not shared
    child.parameter_defaults["size"] = 9
    child.event_sinks.clear()
    assert env.parameter_defaults == {"size": 5}
    assert env.registry.resolve("My::Box", "n", builtin).target == "box.yaml"
    assert len(env.event_sinks) == 1


def test_child_without_exclusion_keeps_every_mapping() -> None:
    env = parse_environment({"resource_registry": {"My::Box": "box.yaml"}})
    child = env.child("n", {}, exclude_type=None)
    assert child.registry.resolve("My::Box", "r", builtin).target == "box.yaml"


# -- 6.3 merging environment files --------------------------------------------------------------

TYPES = {
    "s": "string",
    "n": "number",
    "l": "comma_delimited_list",
    "j": "json",
    "b": "boolean",
}


def merge(*files: Any, base: Environment | None = None, **kw: Any) -> Environment:
    named = [(f"f{i}.yaml", data) for i, data in enumerate(files)]
    return merge_environment_files(base or Environment(), named, TYPES, **kw)


def test_overwrite_is_the_default_and_later_files_win() -> None:
    env = merge(
        {"parameters": {"s": "a", "l": "x"}, "parameter_defaults": {"j": {"k": 1}}},
        {"parameters": {"s": "b"}, "parameter_defaults": {"j": {"m": 2}}},
    )
    assert env.parameters == {"s": "b", "l": "x"}
    assert env.parameter_defaults == {"j": {"m": 2}}


@pytest.mark.parametrize(
    ("param", "first", "second", "strategy", "expected"),
    [
        ("s", "a", "b", "merge", "ab"),
        ("s", "a", "b", "deep_merge", "ab"),
        ("s", "a", "b", "overwrite", "b"),
        ("l", "a,b", "c", "merge", "a,b,c"),
        ("l", ["a", "b"], ["c"], "merge", ["a", "b", "c"]),
        ("l", ["a"], "b,c", "merge", ["a", "b", "c"]),
        ("l", "a", ["b"], "deep_merge", ["a", "b"]),
        ("l", "", "b", "merge", "b"),
        (
            "j",
            {"a": 1, "n": {"x": 1}},
            {"b": 2, "n": {"y": 2}},
            "merge",
            {"a": 1, "b": 2, "n": {"y": 2}},
        ),
        (
            "j",
            {"a": 1, "n": {"x": 1, "l": [1], "s": "p"}},
            {"b": 2, "n": {"y": 2, "l": [2], "s": "q"}},
            "deep_merge",
            {"a": 1, "b": 2, "n": {"x": 1, "y": 2, "l": [1, 2], "s": "pq"}},
        ),
        ("j", {"n": {"x": 1}}, {"n": 5}, "deep_merge", {"n": 5}),
        ("j", '{"a": 1}', {"b": 2}, "merge", {"a": 1, "b": 2}),
        ("j", [1], [2], "merge", [1, 2]),
        ("j", {"a": 1}, [2], "merge", [2]),
        ("n", 1, 2, "overwrite", 2),
        ("b", True, False, "overwrite", False),
    ],
)
def test_strategies_by_type(
    param: str, first: Any, second: Any, strategy: str, expected: Any
) -> None:
    for section in ("parameters", "parameter_defaults"):
        # the first file that sets a parameter records its strategy; later files reuse it
        env = merge(
            {section: {param: first}, "parameter_merge_strategies": {param: strategy}},
            {section: {param: second}},
        )
        assert getattr(env, section) == {param: expected}


@pytest.mark.parametrize(("param", "first", "second"), [("b", True, False), ("n", 1, 2)])
@pytest.mark.parametrize("strategy", ["merge", "deep_merge"])
def test_booleans_and_numbers_cannot_be_merged(
    param: str, first: Any, second: Any, strategy: str
) -> None:
    with pytest.raises(InvalidMergeStrategyForParam) as info:
        merge(
            {"parameters": {param: first}, "parameter_merge_strategies": {param: strategy}},
            {"parameters": {param: second}, "parameter_merge_strategies": {param: strategy}},
        )
    assert f"Invalid merge strategy '{strategy}' for parameter '{param}'." in info.value.message
    assert info.value.path == ("parameters", param)
    assert info.value.category == "f1.yaml"


def test_merge_strategy_with_nothing_to_merge_just_sets() -> None:
    env = merge({"parameters": {"b": True}, "parameter_merge_strategies": {"default": "merge"}})
    assert env.parameters == {"b": True}


def test_invalid_json_text_in_a_merge() -> None:
    with pytest.raises(StackValidationFailed) as info:
        merge(
            {"parameters": {"j": "{not json"}, "parameter_merge_strategies": {"j": "merge"}},
            {"parameters": {"j": {"a": 1}}},
        )
    assert "not valid JSON" in info.value.message


def test_default_strategy_of_a_file() -> None:
    env = merge(
        {
            "parameters": {"s": "a", "l": "x"},
            "parameter_merge_strategies": {"default": "merge", "l": "overwrite"},
        },
        {"parameters": {"s": "b", "l": "y"}},
    )
    assert env.parameters == {"s": "ab", "l": "y"}
    assert env.parameter_merge_strategies == {"s": "merge", "l": "overwrite"}


def test_a_later_default_applies_to_parameters_it_sets_first() -> None:
    env = merge(
        {"parameters": {"s": "a"}},
        {"parameters": {"s": "b", "l": "x"}, "parameter_merge_strategies": {"default": "merge"}},
        {"parameters": {"s": "c", "l": "y"}},
    )
    # s was recorded as overwrite by the first file; l as merge by the second
    assert env.parameters == {"s": "c", "l": "x,y"}


def test_explicit_merge_after_an_implicit_overwrite_conflicts() -> None:
    with pytest.raises(ConflictingMergeStrategyForParam) as info:
        merge(
            {"parameters": {"s": "a"}},
            {"parameters": {"s": "b"}, "parameter_merge_strategies": {"s": "merge"}},
        )
    assert "Conflicting merge strategy 'merge' for parameter 's' in file 'f1.yaml'." in str(
        info.value
    )


def test_unrecognised_strategy_falls_back_to_the_file_default() -> None:
    env = merge(
        {"parameters": {"s": "a"}, "parameter_merge_strategies": {"default": "merge", "s": "nope"}},
        {"parameters": {"s": "b"}},
    )
    assert env.parameters == {"s": "ab"}
    # an unrecognised default is overwrite
    env = merge(
        {"parameters": {"s": "a"}, "parameter_merge_strategies": {"default": "nope", "s": "bad"}},
        {"parameters": {"s": "b"}},
    )
    assert env.parameters == {"s": "b"}


def test_recorded_strategy_is_reused_by_later_files() -> None:
    env = merge(
        {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "merge"}},
        {"parameters": {"s": "b"}},
        {"parameters": {"s": "c"}},
    )
    assert env.parameters == {"s": "abc"}
    assert env.parameter_merge_strategies == {"s": "merge"}


def test_strategy_record_is_shared_by_parameters_and_defaults() -> None:
    env = merge(
        {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "merge"}},
        {"parameter_defaults": {"s": "x"}},
        {"parameter_defaults": {"s": "y"}},
    )
    assert env.parameter_defaults == {"s": "xy"}
    with pytest.raises(ConflictingMergeStrategyForParam):
        merge(
            {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "merge"}},
            {"parameter_defaults": {"s": "y"}, "parameter_merge_strategies": {"s": "overwrite"}},
        )


def test_conflicting_merge_strategy() -> None:
    with pytest.raises(ConflictingMergeStrategyForParam) as info:
        merge(
            {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "merge"}},
            {"parameters": {"s": "b"}, "parameter_merge_strategies": {"s": "deep_merge"}},
        )
    assert (
        "Conflicting merge strategy 'deep_merge' for parameter 's' in file 'f1.yaml'."
        in info.value.message
    )


def test_same_strategy_again_is_no_conflict() -> None:
    env = merge(
        {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "merge"}},
        {"parameters": {"s": "b"}, "parameter_merge_strategies": {"s": "merge"}},
    )
    assert env.parameters == {"s": "ab"}


def test_strategy_recorded_only_when_a_file_sets_the_parameter() -> None:
    # the first file names a strategy for s but sets no value: nothing is recorded
    env = merge(
        {"parameters": {"l": "x"}, "parameter_merge_strategies": {"s": "merge"}},
        {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "overwrite"}},
        {"parameters": {"s": "b"}},
    )
    assert env.parameters == {"l": "x", "s": "b"}


def test_file_order_matters() -> None:
    a = {"parameters": {"s": "a"}, "parameter_merge_strategies": {"s": "merge"}}
    b = {"parameters": {"s": "b"}}
    assert merge(a, b).parameters == {"s": "ab"}
    # b records overwrite for s first, so a's explicit merge now conflicts
    with pytest.raises(ConflictingMergeStrategyForParam):
        merge(b, a)


def test_nulls_are_ignored() -> None:
    env = merge(
        {"parameters": {"s": "a"}, "parameter_defaults": {"l": "x"}},
        {"parameters": {"s": None}, "parameter_defaults": {"l": None}},
    )
    assert env.parameters == {"s": "a"}
    assert env.parameter_defaults == {"l": "x"}


def test_unknown_names_are_ignored() -> None:
    env = merge(
        {"parameters": {"s": "a"}, "parameter_defaults": {"l": "x"}},
        {"parameters": {"typo": 1}, "parameter_defaults": {"nested_only": 2}},
    )
    assert env.parameters == {"s": "a"}
    assert env.parameter_defaults == {"l": "x"}


def test_unknown_names_into_an_empty_section_are_kept() -> None:
    # Heat quirk kept: the first file's section is taken verbatim, so an unknown
    # name in `parameters` is still reported later as UnknownUserParameter.
    env = merge({"parameters": {"typo": 1, "s": "a", "gone": None}})
    assert env.parameters == {"typo": 1, "s": "a"}


def test_cli_parameters_win_over_files() -> None:
    # Rec of quirk 23: Heat let an env file override --parameter.
    env = merge(
        {"parameters": {"s": "file", "l": "x"}},
        cli_parameters={"s": "cli", "n": 7},
    )
    assert env.parameters == {"s": "cli", "l": "x", "n": 7}


def test_cli_parameters_without_files() -> None:
    base = parse_environment({"parameters": {"s": "inline", "l": "x"}})
    env = merge_environment_files(base, [], TYPES, cli_parameters={"s": "cli"})
    assert env.parameters == {"s": "cli", "l": "x"}
    assert base.parameters == {"s": "inline", "l": "x"}


def test_base_environment_is_the_starting_point_and_unchanged() -> None:
    base = parse_environment({"parameters": {"s": "a"}, "parameter_defaults": {"j": {"k": [1]}}})
    env = merge(
        {
            "parameters": {"s": "b"},
            "parameter_defaults": {"j": {"k": [2]}},
            "parameter_merge_strategies": {"default": "deep_merge"},
        },
        base=base,
    )
    assert env.parameters == {"s": "ab"}
    assert env.parameter_defaults == {"j": {"k": [1, 2]}}
    assert base.parameters == {"s": "a"}
    assert base.parameter_defaults == {"j": {"k": [1]}}


def test_registry_is_merged_recursively() -> None:
    # Rec of quirk 23: a later `resources:` block combines with the earlier one.
    env = merge(
        {
            "resource_registry": {
                "A": "a.yaml",
                "Old": "OS::Heat::None",
                "resources": {"x": {"hooks": "pre-create"}, "y": {"hooks": "pre-delete"}},
            }
        },
        {
            "resource_registry": {
                "B": "b.yaml",
                "Old": None,
                "resources": {"x": {"restricted_actions": "replace"}},
            }
        },
    )
    assert env.registry.to_dict() == {
        "A": "a.yaml",
        "B": "b.yaml",
        "resources": {
            "x": {"hooks": "pre-create", "restricted_actions": "replace"},
            "y": {"hooks": "pre-delete"},
        },
    }
    assert env.registry.hooks_for("x") == frozenset({"pre-create"})


def test_registry_merge_keeps_the_global_layer() -> None:
    glob = ResourceRegistry({"G": "OS::Heat::Value"}, system=True)
    base = Environment(registry=ResourceRegistry(parent=glob))
    env = merge({"resource_registry": {"U": "G"}}, base=base)
    assert env.registry.parent is glob
    assert env.registry.resolve("U", "r", builtin).target == "OS::Heat::Value"


def test_event_sinks_are_concatenated() -> None:
    # Rec of quirk 23: Heat crashed on several files with event_sinks.
    sink1 = {"type": "zaqar-queue", "target": "one"}
    sink2 = {"type": "zaqar-queue", "target": "two", "ttl": 5}
    env = merge({"event_sinks": [sink1]}, {"event_sinks": [sink2]})
    assert env.event_sinks == [sink1, sink2]


def test_encrypted_param_names_accumulate() -> None:
    env = merge({"encrypted_param_names": ["a"]}, {"encrypted_param_names": ["a", "b"]})
    assert env.encrypted_param_names == ["a", "b"]


def test_file_errors_name_the_file() -> None:
    with pytest.raises(EnvironmentParseError) as info:
        merge({"parameters": {}}, {"parameterz": {}})
    assert info.value.category == "f1.yaml"
    with pytest.raises(InvalidBreakPointHook) as hook:
        merge({"resource_registry": {"resources": {"a": {"hooks": "nope"}}}})
    assert hook.value.category == "f0.yaml"


def test_empty_files_change_nothing() -> None:
    base = parse_environment({"parameters": {"s": "a"}})
    env = merge(None, {}, base=base)
    assert env.to_dict() == base.to_dict()


def test_cfn_type_names_are_understood() -> None:
    files = [
        ("a", {"parameters": {"P": "x"}, "parameter_merge_strategies": {"P": "merge"}}),
        ("b", {"parameters": {"P": "y"}}),
    ]
    env = merge_environment_files(Environment(), files, {"P": "CommaDelimitedList"})
    assert env.parameters == {"P": "x,y"}
