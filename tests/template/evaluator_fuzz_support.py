"""Random templates, environments and files for the evaluator fuzz tests.

Random templates cover every version, every section and every resource key, well
and badly formed, with values from evaluator_fuzz_values.py; random environments,
files maps and parameter values go with them, as the keyword arguments of
``build_stack`` (``cases``). A fixed valid skeleton per version holds random
values where validation cannot reject them.
"""

from __future__ import annotations

from typing import Any

from evaluator_fuzz_mutants import mutated_calls
from evaluator_fuzz_values import (
    CONDITIONS,
    DEEPISH_JSON,
    MISSING_FILES,
    PARAMETERS,
    RESOURCES,
    TYPES,
    VERSIONS,
    Strategy,
    keys,
    leaves,
    pick,
    small_value,
    sometimes_garbage,
    texts,
    value,
    version_values,
)
from hypothesis import strategies as st

from kiln.schema.checkers import builtin_checkers
from kiln.template.versions import TemplateVersion

# -- template sections -------------------------------------------------------------------------

PATTERNS = [
    "[a-z]*",
    "a|ab",
    "(",
    "x{2,1}",
    ".*",
    "[[a]",
    "(" * 2000 + ")" * 2000,
    "a{99999999999999999999}",
    "\\N{NOPE}",
    "(?P<n>a)(?P=n)",
]
CUSTOM_CONSTRAINTS = [*builtin_checkers(), "nova.flavor", "cidr", ""]
HOT_PARAMETER_TYPES = ["string", "number", "comma_delimited_list", "json", "boolean"]
CFN_PARAMETER_TYPES = ["String", "Number", "CommaDelimitedList", "Json", "Boolean"]


def hot_constraint() -> Strategy:
    bound = pick(small_value, -3, 0, 2, 10, "2", "x", 1.5, None)
    one = st.one_of(
        st.builds(
            lambda a: {"range": a},
            st.dictionaries(st.sampled_from(["min", "max", "bad"]), bound, max_size=2),
        ),
        st.builds(
            lambda a: {"length": a},
            st.dictionaries(st.sampled_from(["min", "max"]), bound, max_size=2),
        ),
        st.builds(
            lambda a: {"modulo": a},
            st.dictionaries(st.sampled_from(["step", "offset"]), bound, max_size=2),
        ),
        st.builds(
            lambda a: {"allowed_values": a},
            st.one_of(st.lists(st.one_of(leaves, small_value), max_size=3), small_value),
        ),
        st.builds(lambda a: {"allowed_pattern": a}, pick(small_value, *PATTERNS)),
        st.builds(lambda a: {"custom_constraint": a}, pick(small_value, *CUSTOM_CONSTRAINTS)),
        st.just({}),
    )
    described = st.builds(
        lambda c, d: {**c, **d},
        one,
        st.fixed_dictionaries({}, optional={"description": st.one_of(texts, small_value)}),
    )
    return sometimes_garbage(described)


def parameter(version: TemplateVersion) -> Strategy:
    default = pick(small_value, "a,b", '{"k": 1}', "5", "yes", DEEPISH_JSON, "x" * 30)
    if version.is_hot:
        declaration = st.fixed_dictionaries(
            {"type": sometimes_garbage(st.sampled_from([*HOT_PARAMETER_TYPES, "String"]))},
            optional={
                "default": default,
                "constraints": sometimes_garbage(st.lists(hot_constraint(), max_size=2)),
                "hidden": pick(small_value, True, False, "true", "maybe"),
                "immutable": st.booleans(),
                "label": pick(small_value, "L"),
                "description": texts,
                "tags": sometimes_garbage(st.lists(texts, max_size=2)),
                "schema": small_value,
                "bogus": small_value,
            },
        )
    else:
        bound = pick(small_value, -3, 0, 2, 10, "2", "x")
        declaration = st.fixed_dictionaries(
            {"Type": sometimes_garbage(st.sampled_from([*CFN_PARAMETER_TYPES, "string"]))},
            optional={
                "Default": default,
                "NoEcho": pick(small_value, True, "true", "TRUE"),
                "AllowedValues": st.one_of(st.lists(leaves, max_size=3), small_value),
                "AllowedPattern": pick(small_value, *PATTERNS),
                "MinLength": bound,
                "MaxLength": bound,
                "MinValue": bound,
                "MaxValue": bound,
                "ConstraintDescription": pick(small_value, "D"),
                "Description": texts,
                "Bogus": small_value,
            },
        )
    return sometimes_garbage(declaration, 12)


CFN_RESOURCE_KEYS = {
    "type": "Type",
    "properties": "Properties",
    "metadata": "Metadata",
    "depends_on": "DependsOn",
    "deletion_policy": "DeletionPolicy",
    "update_policy": "UpdatePolicy",
    "description": "Description",
    "condition": "Condition",
}


def resource(version: TemplateVersion) -> Strategy:
    type_ = st.one_of(
        st.sampled_from(["OS::Heat::None", "OS::Heat::Value", "OS::Heat::Value"]),
        st.sampled_from(TYPES),
        st.builds(lambda p: {"get_param": p}, st.sampled_from(PARAMETERS)),
        small_value,
    )
    fields = {
        "type": type_,
        "properties": st.one_of(
            st.fixed_dictionaries({"value": value}, optional={"type": small_value}),
            st.dictionaries(st.sampled_from(["a", "b", "c", "value", "p0"]), value, max_size=3),
            value,
        ),
        "metadata": value,
        "depends_on": st.one_of(
            pick(small_value, *RESOURCES),
            st.lists(st.sampled_from([*RESOURCES, "nope"]), max_size=2),
        ),
        "deletion_policy": pick(small_value, "Delete", "Retain", "Snapshot", "retain", "Bad"),
        "update_policy": value,
        "description": pick(small_value, "d"),
        "condition": pick(small_value, *CONDITIONS, True, False),
        "external_id": pick(small_value, "ext-id"),
        "bogus": small_value,
    }
    if version.is_cfn:
        fields = {CFN_RESOURCE_KEYS.get(k, k): v for k, v in fields.items()}
    type_key = "Type" if version.is_cfn else "type"
    required = {type_key: fields.pop(type_key)}
    # Mostly the common keys only, so that many templates are valid.
    first = list(fields)[:1]
    common = st.fixed_dictionaries(required, optional={k: fields[k] for k in first})
    return sometimes_garbage(st.one_of(common, st.fixed_dictionaries(required, optional=fields)))


def output(version: TemplateVersion) -> Strategy:
    names = (
        ("Value", "Description", "Condition")
        if version.is_cfn
        else ("value", "description", "condition")
    )
    body = st.fixed_dictionaries(
        {names[0]: value},
        optional={names[1]: pick(small_value, "d"), names[2]: pick(small_value, *CONDITIONS)},
    )
    return sometimes_garbage(body, 12)


def condition_definition() -> Strategy:
    operand = st.one_of(st.sampled_from(CONDITIONS), st.booleans(), value)
    return st.one_of(
        st.booleans(),
        st.builds(lambda a, b: {"equals": [a, b]}, value, value),
        st.builds(lambda a, b: {"Fn::Equals": [a, b]}, value, value),
        st.builds(lambda a: {"not": a}, operand),
        st.builds(lambda a, b: {"and": [a, b]}, operand, operand),
        st.builds(lambda a, b: {"Fn::Or": [a, b]}, operand, operand),
        value,
    )


def version_value(version: TemplateVersion) -> Strategy:
    """The version key's value: the date, or one of its aliases."""
    return st.sampled_from([version.date, *version.aliases])


def mappings() -> Strategy:
    inner = st.one_of(
        st.dictionaries(st.sampled_from(["v0", "v1"]), value, max_size=2), small_value
    )
    entries = st.dictionaries(st.sampled_from(["k0", "k1"]), inner, max_size=2)
    return st.one_of(
        st.dictionaries(st.sampled_from(["m0", "m1"]), entries, max_size=2), small_value
    )


def parameter_groups() -> Strategy:
    group = st.fixed_dictionaries(
        {"parameters": st.lists(st.sampled_from([*PARAMETERS, "nope"]), max_size=2)},
        optional={"label": texts, "description": small_value},
    )
    return st.one_of(st.lists(group, max_size=2), small_value)


@st.composite
def templates(draw: st.DrawFn, *, nested: bool = False) -> dict[Any, Any]:
    version = draw(st.sampled_from(VERSIONS))
    cfn = version.is_cfn
    doc: dict[Any, Any] = {version.key: draw(version_value(version))}

    def section(name: str, strategy: Strategy) -> None:
        doc[name.capitalize() if cfn else name] = draw(sometimes_garbage(strategy, 15))

    size = 2 if nested else 3
    if draw(st.booleans()):
        section(
            "parameters",
            st.dictionaries(st.sampled_from(PARAMETERS), parameter(version), max_size=size),
        )
    if version.has_conditions and draw(st.booleans()):
        section(
            "conditions",
            st.dictionaries(st.sampled_from(CONDITIONS), condition_definition(), max_size=2),
        )
    names = st.one_of(st.sampled_from(RESOURCES), st.sampled_from(RESOURCES), keys)
    section("resources", st.dictionaries(names, resource(version), max_size=size))
    if draw(st.booleans()):
        section(
            "outputs",
            st.dictionaries(st.sampled_from(["o", "o1", "value"]), output(version), max_size=2),
        )
    extras = {
        ("Description" if cfn else "description"): pick(small_value, "d"),
        "bogus_section": small_value,
        **({"Mappings": mappings()} if cfn else {"parameter_groups": parameter_groups()}),
    }
    for key, strategy in extras.items():
        if draw(st.integers(0, 4)) == 0:
            doc[key] = draw(strategy)
    return doc


# A skeleton every version accepts, so that most cases get past validation and their
# random values are resolved as outputs, before and after simulated creation.
SKELETON_PARAMETERS = {
    "p0": ("string", "a,b"),
    "p1": ("json", {"k": [1, "x"], "n": None}),
    "p2": ("comma_delimited_list", "x,y"),
}
SKELETON_MAPPINGS = {"m0": {"k0": {"v0": "found", "v1": [1, {"a": 2}]}}}


def skeleton(version: TemplateVersion, r0: Any, r2: Any, o: Any, o1: Any) -> dict[str, Any]:
    """A valid template of ``version`` with four free values (two resources, two outputs)."""
    hot = version.is_hot
    t, p, v = ("type", "properties", "value") if hot else ("Type", "Properties", "Value")
    cfn_types = dict(zip(HOT_PARAMETER_TYPES, CFN_PARAMETER_TYPES))
    parameters = {
        name: (
            {"type": kind, "default": default}
            if hot
            else {"Type": cfn_types[kind], "Default": default}
        )
        for name, (kind, default) in SKELETON_PARAMETERS.items()
    }
    doc: dict[str, Any] = {
        version.key: version.date,
        ("parameters" if hot else "Parameters"): parameters,
        ("resources" if hot else "Resources"): {
            "r0": {t: "OS::Heat::Value", p: {"value": r0}},
            "r1": {t: "OS::Heat::None"},
            "r2": {t: "OS::Heat::Value", p: {"value": [r2]}},  # never null: it is required
        },
        ("outputs" if hot else "Outputs"): {"o": {v: o}, "o1": {v: o1}},
    }
    if version.has_conditions:
        first = {"equals": [{"get_param": "p0"}, "a,b"]} if hot else {"Fn::Equals": ["a", "a"]}
        doc["conditions" if hot else "Conditions"] = {"c0": first, "c1": False, "c2": True}
    if not hot:
        doc["Mappings"] = SKELETON_MAPPINGS
    return doc


@st.composite
def skeleton_templates(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(VERSIONS))
    free = st.one_of(version_values(version), mutated_calls(version))
    return skeleton(version, draw(st.one_of(leaves, free)), draw(free), draw(free), draw(free))


# -- files and environments --------------------------------------------------------------------

NESTED = """heat_template_version: 2016-10-14
parameters:
  a: {type: string, default: x}
  b: {type: json, default: {}}
  c: {type: comma_delimited_list}
resources:
  inner:
    type: OS::Heat::Value
    properties: {value: {get_param: a}}
outputs:
  o: {value: {get_attr: [inner, value]}}
  facade: {value: {resource_facade: metadata}}
"""
SELF = """heat_template_version: 2015-10-15
resources:
  again: {type: self.yaml}
"""
FIXED_FILES: dict[str, Any] = {
    "f.txt": "hello",
    "nested.yaml": NESTED,
    "self.yaml": SELF,
    "bad.yaml": "{{{",
    "list.yaml": "[1, 2]",
    "data.json": '{"heat_template_version": "2013-05-23", "resources": {}}',
}


@st.composite
def files_maps(draw: st.DrawFn) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, content in FIXED_FILES.items():
        if draw(st.integers(0, 3)) > 0:
            out[key] = content if draw(st.integers(0, 6)) > 0 else draw(small_value)
    if draw(st.booleans()):
        out["gen.yaml"] = draw(st.one_of(templates(nested=True), texts, small_value))
    if draw(st.integers(0, 5)) == 0:
        out[draw(keys)] = draw(small_value)
    return out


REGISTRY_KEYS = [
    "My::T",
    "My::*",
    "My::Wild::*",
    "OS::Heat::Alias",
    "OS::*",
    "nested.yaml",
    "*",
    "AWS::EC2::Instance",
    "OS::Heat::Value",
]
REGISTRY_TARGETS = [
    "OS::Heat::None",
    "OS::Heat::Value",
    "My::*",
    "OS::Heat::*",
    "My::T",
    "nested.yaml",
    "self.yaml",
    "gen.yaml",
    "My::Wild::*",
    *MISSING_FILES,
]
HOOKS = ["pre-create", "pre-update", "post-delete", "pre-bogus"]


def registries() -> Strategy:
    target = st.one_of(st.sampled_from(REGISTRY_TARGETS), st.none(), small_value)
    per_resource = st.dictionaries(
        st.sampled_from([*REGISTRY_KEYS, "hooks", "restricted_actions"]),
        st.one_of(
            target,
            st.sampled_from(HOOKS),
            st.lists(st.sampled_from(HOOKS), max_size=2),
            st.sampled_from(["update", "replace", "bad"]),
        ),
        max_size=3,
    )
    resources = st.dictionaries(
        st.sampled_from([*RESOURCES, "r*", "*"]), sometimes_garbage(per_resource), max_size=2
    )
    registry = st.builds(
        lambda top, res: {**top, **({"resources": res} if res is not None else {})},
        st.dictionaries(st.one_of(st.sampled_from(REGISTRY_KEYS), keys), target, max_size=3),
        st.one_of(st.none(), resources),
    )
    return sometimes_garbage(registry, 10)


parameter_values = st.dictionaries(
    st.one_of(st.sampled_from([*PARAMETERS, "nope"]), keys),
    pick(small_value, "a,b", '{"k": [1]}', "12", "yes", DEEPISH_JSON),
    max_size=3,
)


def environments() -> Strategy:
    sink = st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("zaqar-queue"), "target": texts},
            optional={"ttl": pick(small_value, 5, -1)},
        ),
        small_value,
    )
    env = st.fixed_dictionaries(
        {},
        optional={
            "parameters": sometimes_garbage(parameter_values, 15),
            "parameter_defaults": sometimes_garbage(parameter_values, 15),
            "resource_registry": registries(),
            "event_sinks": sometimes_garbage(st.lists(sink, max_size=2), 15),
            "parameter_merge_strategies": st.dictionaries(
                st.sampled_from([*PARAMETERS, "default"]),
                st.sampled_from(["merge", "deep_merge", "overwrite", "bad"]),
                max_size=2,
            ),
            "encrypted_param_names": st.lists(st.sampled_from(PARAMETERS), max_size=1),
        },
    )
    garbage = st.integers(0, 20).flatmap(lambda n: small_value if n == 0 else st.none())
    return st.one_of(st.none(), env, env, env, garbage)


@st.composite
def cases(
    draw: st.DrawFn, template: Strategy | None = None, *, quiet: Strategy | None = None
) -> dict[str, Any]:
    """Keyword arguments of build_stack (types aside).

    When ``quiet`` draws True, the environment only maps types and no parameter
    values are given: the template alone decides whether the case is valid.
    """
    if template is None:
        template = st.integers(0, 30).flatmap(lambda n: small_value if n == 0 else templates())
    if quiet is not None and draw(quiet):
        return {
            "template": draw(template),
            "environment": draw(
                st.one_of(st.none(), registries().map(lambda r: {"resource_registry": r}))
            ),
            "files": FIXED_FILES,
            "check_values": draw(st.booleans()),
        }
    env_files = [("env1.yaml", draw(environments()))] if draw(st.integers(0, 3)) == 0 else []
    return {
        "template": draw(template),
        "environment": draw(environments()),
        "environment_files": env_files,
        "files": draw(files_maps()),
        "parameters": draw(st.one_of(st.none(), parameter_values)),
        "check_values": draw(st.booleans()),
        "allow_missing": draw(st.booleans()),
    }


# -- a rich valid case, for the single-mutation sweep -----------------------------------------

HOT_RICH_PARAMETERS = {
    "s": {"type": "string", "default": "abc", "label": "L", "description": "D", "hidden": False,
          "constraints": [{"length": {"min": 1, "max": 10}, "description": "len"},
                          {"allowed_pattern": "[a-z]*"}, {"allowed_values": ["abc", "def"]}]},
    "n": {"type": "number", "default": 3,
          "constraints": [{"range": {"min": 1, "max": 5}}, {"modulo": {"step": 2, "offset": 1}}]},
    "l": {"type": "comma_delimited_list", "default": "a,b",
          "constraints": [{"length": {"max": 3}}]},
    "j": {"type": "json", "default": {"k": [1]}},
    "b": {"type": "boolean", "default": True, "immutable": True},
    "c": {"type": "string", "default": "10.0.0.1",
          "constraints": [{"custom_constraint": "ip_addr"}]},
}  # fmt: skip
CFN_RICH_PARAMETERS = {
    "s": {"Type": "String", "Default": "abc", "MinLength": 1, "MaxLength": "10",
          "AllowedPattern": "[a-z]*", "AllowedValues": ["abc", "def"],
          "ConstraintDescription": "cd", "NoEcho": "false", "Description": "D"},
    "n": {"Type": "Number", "Default": "3", "MinValue": 1, "MaxValue": 5},
    "l": {"Type": "CommaDelimitedList", "Default": "a,b"},
    "j": {"Type": "Json", "Default": {"k": [1]}},
}  # fmt: skip


def rich_case(version: TemplateVersion) -> dict[str, Any]:
    """A valid case of ``version`` that uses most of what templates and environments offer."""
    if version.is_cfn:
        template: dict[str, Any] = {
            version.key: version.date,
            "Description": "d",
            "Parameters": CFN_RICH_PARAMETERS,
            "Mappings": SKELETON_MAPPINGS,
            "Resources": {
                "r0": {"Type": "OS::Heat::Value", "DependsOn": ["r1"],
                       "Properties": {"value": {"Fn::FindInMap": ["m0", "k0", "v1"]}},
                       "Metadata": {"m": {"Ref": "s"}}, "DeletionPolicy": "Retain"},
                "r1": {"Type": "OS::Heat::None"},
                "r2": {"Type": "nested.yaml", "Properties": {"a": {"Ref": "s"}, "c": "x,y"}},
            },
            "Outputs": {"o": {"Value": {"Fn::GetAtt": ["r0", "value"]}, "Description": "d"},
                        "o1": {"Value": {"Fn::Join": [",", {"Ref": "l"}]}}},
        }  # fmt: skip
        if version.has_conditions:
            template["Conditions"] = {"c0": {"Fn::Equals": [{"Ref": "s"}, "abc"]},
                                      "c1": {"Fn::Not": ["c0"]}}  # fmt: skip
            template["Resources"]["r1"]["Condition"] = "c0"
            template["Outputs"]["o1"]["Condition"] = "c0"
    else:
        template = {
            version.key: version.date,
            "description": "d",
            "parameter_groups": [{"label": "g", "parameters": ["s"]}],
            "parameters": HOT_RICH_PARAMETERS if version.has_modulo else {
                **HOT_RICH_PARAMETERS, "n": {"type": "number", "default": 3}},
            "resources": {
                "r0": {"type": "OS::Heat::Value", "depends_on": ["r1"],
                       "properties": {"value": {"get_param": ["j", "k", 0]}, "type": "number"},
                       "metadata": {"m": {"get_param": "s"}}, "deletion_policy": "Retain",
                       "update_policy": {}, "description": "d"},
                "r1": {"type": "OS::Heat::None"},
                "r2": {"type": "nested.yaml",
                       "properties": {"a": {"get_param": "s"}, "c": {"get_param": "l"}}},
            },
            "outputs": {"o": {"value": {"get_attr": ["r0", "value"]}, "description": "d"},
                        "o1": {"value": {"list_join": [",", {"get_param": "l"}]}}},
        }  # fmt: skip
        if version.has_conditions:
            template["conditions"] = {"c0": {"equals": [{"get_param": "s"}, "abc"]},
                                      "c1": {"not": "c0"}, "c2": {"and": ["c0", True]}}  # fmt: skip
            template["resources"]["r1"]["condition"] = "c2"
            template["resources"]["r3"] = {"type": "OS::Heat::None", "external_id": "ext"}
            template["outputs"]["o1"]["condition"] = "c0"
    environment = {
        "parameters": {"s": "abc", "j": '{"b": [2]}'},
        "parameter_defaults": {"n": 5, "a": "nested default"},
        "resource_registry": {"My::T": "OS::Heat::None", "My::*": "OS::Heat::*",
                              "resources": {"r1": {"hooks": ["pre-create"]}}},
        "event_sinks": [{"type": "zaqar-queue", "target": "q", "ttl": 5}],
        "parameter_merge_strategies": {"s": "merge"},
        "encrypted_param_names": [],
    }  # fmt: skip
    # A file whose values merge with the inline environment's.
    env_file = {
        "parameters": {"j": '{"a": 1, "b": [3]}', "s": "def"},
        "parameter_merge_strategies": {"j": "deep_merge", "s": "overwrite"},
    }
    return {"template": template, "environment": environment, "files": FIXED_FILES,
            "environment_files": [("env1.yaml", env_file)], "parameters": {"l": "x,y"},
            "check_values": True}  # fmt: skip
