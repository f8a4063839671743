"""Fuzz tests for the evaluator: any template builds, resolves and reports, or fails
with a KilnError.

Hypothesis writes random templates for every template version (HOT and both CFN
formats), as data and as YAML text: random parameter declarations (types,
defaults, constraints, malformed ones too), conditions, resources (built-in test
types, unknown types, template resources whose files are in a random files map,
with every resource key, well and badly formed), outputs and CFN mappings. Their
values are random nested data in which calls of every intrinsic function name of
every version appear, with arguments of the right shape and of wrong ones. Each
comes with a random environment (parameters, parameter_defaults, a resource
registry with aliases, wildcards, templates and hooks, event sinks), sometimes
an environment file, and random parameter values.

Property: ``build_stack`` (with the test type catalogue and with the default
unchecked types) either raises a KilnError or collects only KilnErrors with a
message; when it collects none, simulated creation, output resolution, the
reports and the graph renderings raise nothing but KilnErrors either.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.core.errors import KilnError, ValidationFailed
from kiln.graph.render import render_dot, render_text
from kiln.template.inputs import build_stack
from kiln.template.report import resolved_outputs, resolved_resources, validate_document
from kiln.template.stack import StackDefinition
from kiln.schema.resource_types import ResourceTypes
from kiln.template.versions import AWS_KEY, HOT_KEY, TemplateVersion, all_versions
from kiln.testing.heat_types import HEAT_TEST_TYPES, CreatedState

FUZZ = settings(
    max_examples=220,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEWER = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

VERSIONS = all_versions()
FUNCTION_NAMES = sorted(
    {name for v in VERSIONS for name in (*v.functions, *v.condition_functions)}
    | {"Fn::Sub", "get_input", "Fn::ImportValue"}  # unknown everywhere: plain data
)

# -- names the generated parts refer to each other by --------------------------------------

RESOURCES = ["r0", "r1", "r2"]
PARAMETERS = ["p0", "p1", "p2"]
PSEUDO = ["OS::stack_name", "OS::stack_id", "OS::project_id", "AWS::Region", "AWS::StackId"]
CONDITIONS = ["c0", "c1", "c2"]
FILES = ["f.txt", "nested.yaml", "self.yaml", "bad.yaml", "list.yaml", "gen.yaml", "data.json"]
MISSING_FILES = ["missing.yaml", "http://example.com/x.yaml", "file:///etc/x.yaml"]
ATTRIBUTES = ["value", "show", "o", "nope", "OS::stack_id"]
TYPES = [
    "OS::Heat::None",
    "OS::Heat::Value",
    "My::T",
    "My::Wild::Thing",
    "OS::Nova::Server",
    "AWS::EC2::Instance",
    *FILES[1:6],
    *MISSING_FILES,
]
NAMES = [*RESOURCES, *PARAMETERS, *PSEUDO, *CONDITIONS, *FILES, *ATTRIBUTES, *TYPES]

# -- leaves ----------------------------------------------------------------------------------

# Wider than Python's 4300-digit limit for int <-> decimal text (YAML reads it from hex).
HUGE = int("f" * 5000, 16)
# Deeper than any bound on nesting: as data, and as JSON text.
DEEP_LIST: Any = "x"
for _ in range(400):
    DEEP_LIST = [DEEP_LIST]
DEEP_JSON = "[" * 3000 + "]" * 3000

numbers = st.one_of(
    st.integers(-5, 5),
    st.integers(),
    st.sampled_from([10**30, -(2**63), 2**64, 10**400, -(10**400), HUGE, -HUGE]),
    st.floats(),
    st.sampled_from([math.inf, -math.inf, math.nan, 0.5, -0.0, 1e308]),
)
texts = st.one_of(
    st.text(max_size=8),
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.sampled_from(
        ["", " ", "%x%", "$var", ",", "a,b, c", "[1, 2]", '{"a": 1}', "true", "no", "017",
         "1e5", "é∂😀", "\x00", "a\nb", "*", "md5", "sha256", "sha3_512", "http", "::1",
         "[::1]", ".member.0.k=a", "x.member.1.v=b", "Delete", "retain", "Snapshot", "bad",
         "{{{", "1:20", "9" * 5000, DEEP_JSON, '{"a": ' * 200 + "1" + "}" * 200,
         ".member." + "9" * 5000 + ".k=a"]
    ),
)  # fmt: skip
leaves = st.one_of(
    st.none(),
    st.booleans(),
    numbers,
    texts,
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
    st.just([]),
    st.just({}),
    st.integers(0, 30).flatmap(lambda n: st.just(DEEP_LIST) if n == 0 else st.just(None)),
)
keys = st.one_of(
    st.sampled_from(NAMES),
    texts,
    st.sampled_from(["template", "params", "for_each", "permutations", "keys", "values"]),
    st.sampled_from([None, 0, 1, True, 1.5]),  # non-string keys, as YAML can give
)


# -- function calls --------------------------------------------------------------------------

Shape = Callable[[st.SearchStrategy[Any]], st.SearchStrategy[Any]]


def _list(*parts: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.tuples(*parts).map(list)


def _maybe_list(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(children, max_size=3), children)


def _cond(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.booleans(), st.sampled_from(CONDITIONS), children)


def _path(children: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.one_of(st.sampled_from(["a", "0", "value", "k"]), st.integers(-2, 3),
                              children), max_size=3)  # fmt: skip


def _get_param(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    name = st.sampled_from([*PARAMETERS, *PSEUDO, "nope"])
    return st.one_of(name, st.builds(lambda n, p: [n, *p], st.one_of(name, c), _path(c)))


def _get_attr(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    res = st.one_of(st.sampled_from([*RESOURCES, "nope"]), c)
    attr = st.one_of(st.sampled_from(ATTRIBUTES), c)
    return st.one_of(
        st.builds(lambda r, a, p: [r, a, *p], res, attr, _path(c)), _list(res), _list(res, attr)
    )


def _replace_params(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.dictionaries(st.one_of(st.sampled_from(["%x%", "$var", "a", ""]), keys),
                                     c, max_size=3), c)  # fmt: skip


def _str_replace(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    template = st.one_of(st.sampled_from(["%x% and $var", "a%x%a", ""]), c)
    return st.fixed_dictionaries({"template": template, "params": _replace_params(c)})


def _repeat(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    values = st.one_of(st.lists(st.one_of(texts, c), max_size=3),
                       st.dictionaries(texts, c, max_size=2), c)  # fmt: skip
    for_each = st.one_of(st.dictionaries(st.sampled_from(["%x%", "$v", "<%y%>"]), values,
                                         max_size=2), c)  # fmt: skip
    return st.fixed_dictionaries(
        {"for_each": for_each, "template": c},
        optional={"permutations": st.one_of(st.booleans(), c)},
    )


def _make_url(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    part = st.one_of(texts, c)
    return st.fixed_dictionaries(
        {},
        optional={
            "scheme": st.one_of(st.sampled_from(["http", "https", "a:b", ""]), part),
            "host": st.one_of(st.sampled_from(["h", "::1", "[::1]", "é"]), part),
            "port": st.one_of(st.integers(-1, 70000), st.sampled_from(["80", " 8 ", "x"]), part),
            "path": part,
            "query": st.one_of(st.dictionaries(keys, c, max_size=2), part),
            "fragment": part,
            "username": part,
            "password": part,
            "bogus": part,
        },
    )


def _yaql(c: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    # Small expressions only: yaql_function.py is being changed elsewhere, and its own
    # tests cover hostile expressions (budgets, quotas).
    expression = st.one_of(
        st.sampled_from(
            ["$.data", "$.data.a", "$.data.len()", "$.data.keys()", "1 + 1", "$.data.where($ > 1)",
             "$.data.select($ * 2)", "$.data.join(',')", "$.data[0]", "1 /", "", "$", "let(x => 1)",
             "$.data.toUpper()", "null"]
        ),
        c,
    )  # fmt: skip
    return st.one_of(
        st.fixed_dictionaries({"expression": expression, "data": c}),
        st.fixed_dictionaries({"expression": expression}),
        c,
    )


SHAPES: dict[str, Shape] = {
    "get_param": _get_param,
    "Ref": lambda c: st.one_of(st.sampled_from([*RESOURCES, *PARAMETERS, *PSEUDO, "nope"]), c),
    "get_resource": lambda c: st.one_of(st.sampled_from([*RESOURCES, "nope"]), c),
    "get_attr": _get_attr,
    "Fn::GetAtt": _get_attr,
    "get_file": lambda c: st.one_of(st.sampled_from(FILES + MISSING_FILES), c),
    "list_join": lambda c: st.builds(
        lambda d, ls: [d, *ls], st.one_of(st.sampled_from([",", "", " "]), c),
        st.lists(_maybe_list(c), max_size=3),
    ),
    "Fn::Join": lambda c: _list(st.one_of(st.just(","), c), _maybe_list(c)),
    "str_replace": _str_replace,
    "str_replace_strict": _str_replace,
    "str_replace_vstrict": _str_replace,
    "Fn::Replace": lambda c: _list(_replace_params(c), st.one_of(st.just("%x%$var"), c)),
    "str_split": lambda c: st.builds(
        lambda d, s, i: [d, s, *i], st.one_of(st.sampled_from([",", "", " "]), c),
        st.one_of(st.just("a,b,c"), c), st.lists(st.one_of(st.integers(-4, 4), c), max_size=1),
    ),
    "Fn::Split": lambda c: _list(st.one_of(st.sampled_from([",", ""]), c), c),
    "digest": lambda c: _list(st.one_of(st.sampled_from(["md5", "SHA256", "shake_128", "x"]), c),
                              c),  # fmt: skip
    "Fn::Base64": lambda c: c,
    "repeat": _repeat,
    "map_merge": lambda c: st.lists(st.one_of(st.dictionaries(keys, c, max_size=2), c), max_size=3),
    "map_replace": lambda c: _list(
        st.one_of(st.dictionaries(keys, c, max_size=3), c),
        st.one_of(
            st.fixed_dictionaries({}, optional={"keys": st.dictionaries(keys, c, max_size=2),
                                                "values": st.dictionaries(keys, c, max_size=2)}),
            c,
        ),
    ),  # fmt: skip
    "filter": lambda c: _list(_maybe_list(c), _maybe_list(c)),
    "list_concat": lambda c: st.lists(_maybe_list(c), max_size=3),
    "list_concat_unique": lambda c: st.lists(_maybe_list(c), max_size=3),
    "contains": lambda c: _list(c, st.one_of(_maybe_list(c), texts)),
    "make_url": _make_url,
    "yaql": _yaql,
    "if": lambda c: st.one_of(_list(_cond(c), c, c), _list(_cond(c), c)),
    "Fn::If": lambda c: _list(_cond(c), c, c),
    "equals": lambda c: _list(c, c),
    "Fn::Equals": lambda c: _list(c, c),
    "not": _cond,
    "Fn::Not": lambda c: _list(_cond(c)),
    "and": lambda c: st.lists(_cond(c), max_size=3),
    "or": lambda c: st.lists(_cond(c), max_size=3),
    "Fn::And": lambda c: st.lists(_cond(c), max_size=3),
    "Fn::Or": lambda c: st.lists(_cond(c), max_size=3),
    "resource_facade": lambda c: st.one_of(
        st.sampled_from(["metadata", "deletion_policy", "update_policy", "Metadata"]), c
    ),
    "Fn::ResourceFacade": lambda c: st.one_of(
        st.sampled_from(["Metadata", "DeletionPolicy", "UpdatePolicy", "metadata"]), c
    ),
    "Fn::Select": lambda c: _list(
        st.one_of(st.integers(-2, 3), st.sampled_from(["0", "a", "x"]), c),
        st.one_of(_maybe_list(c), st.dictionaries(keys, c, max_size=2),
                  st.sampled_from(['["a", "b"]', '{"a": 1}', "{", "3"])),
    ),  # fmt: skip
    "Fn::MemberListToMap": lambda c: _list(
        st.one_of(st.just("k"), c), st.one_of(st.just("v"), c),
        st.one_of(st.lists(st.one_of(st.sampled_from(
            [".member.0.k=a", ".member.0.v=b", "p.member.1.k=c", "junk"]), c), max_size=3), c),
    ),  # fmt: skip
    "Fn::FindInMap": lambda c: _list(
        st.one_of(st.sampled_from(["m0", "m1"]), c), st.one_of(st.sampled_from(["k0", "k1"]), c),
        st.one_of(st.sampled_from(["v0", "v1"]), c),
    ),
    "Fn::GetAZs": lambda c: st.one_of(st.just(""), c),
}


def call(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``{name: args}`` for any function name; args of its shape, or anything at all."""

    def with_args(name: str) -> st.SearchStrategy[dict[str, Any]]:
        shape = SHAPES.get(name)
        args = children if shape is None else st.one_of(shape(children), shape(children), children)
        return args.map(lambda a: {name: a})

    return st.sampled_from(FUNCTION_NAMES).flatmap(with_args)


def values(max_leaves: int = 10) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            call(children),
            call(children),
            st.lists(children, max_size=3),
            st.dictionaries(keys, children, max_size=3),
        ),
        max_leaves=max_leaves,
    )


value = values()
small_value = values(4)


def sometimes_garbage(strategy: st.SearchStrategy[Any], one_in: int = 8) -> st.SearchStrategy[Any]:
    """``strategy``, or about once in ``one_in`` draws any value at all."""
    return st.integers(1, one_in).flatmap(lambda n: small_value if n == 1 else strategy)


def optional_keys(
    required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(required, optional=optional)


# -- sections ----------------------------------------------------------------------------------

HOT_PARAMETER_TYPES = ["string", "number", "comma_delimited_list", "json", "boolean"]
CFN_PARAMETER_TYPES = ["String", "Number", "CommaDelimitedList", "Json", "Boolean"]


def hot_constraint() -> st.SearchStrategy[Any]:
    bound = st.one_of(st.integers(-3, 10), st.sampled_from(["2", "x", 1.5, None]), small_value)
    one = st.one_of(
        st.builds(lambda a: {"range": a}, st.dictionaries(
            st.sampled_from(["min", "max", "bad"]), bound, max_size=2)),
        st.builds(lambda a: {"length": a}, st.dictionaries(
            st.sampled_from(["min", "max"]), bound, max_size=2)),
        st.builds(lambda a: {"modulo": a}, st.dictionaries(
            st.sampled_from(["step", "offset"]), bound, max_size=2)),
        st.builds(lambda a: {"allowed_values": a},
                  st.one_of(st.lists(st.one_of(leaves, small_value), max_size=3), small_value)),
        st.builds(lambda a: {"allowed_pattern": a},
                  st.one_of(st.sampled_from(["[a-z]*", "a|ab", "(", "x{2,1}", ".*"]), texts)),
        st.builds(lambda a: {"custom_constraint": a},
                  st.one_of(st.sampled_from(["nova.flavor", "ip_addr", "cidr", ""]), texts)),
        st.just({}),
    )  # fmt: skip
    described = st.builds(
        lambda c, d: {**c, **d}, one,
        st.fixed_dictionaries({}, optional={"description": st.one_of(texts, small_value)}),
    )  # fmt: skip
    return sometimes_garbage(described)


def parameter(version: TemplateVersion) -> st.SearchStrategy[Any]:
    default = st.one_of(leaves, small_value, st.sampled_from(["a,b", '{"k": 1}', "5", "yes"]))
    if version.is_hot:
        declaration = optional_keys(
            {"type": sometimes_garbage(st.sampled_from(HOT_PARAMETER_TYPES + ["String", "int"]))},
            {
                "default": default,
                "constraints": sometimes_garbage(st.lists(hot_constraint(), max_size=2)),
                "hidden": st.one_of(st.booleans(), st.sampled_from(["true", "maybe"])),
                "immutable": st.booleans(),
                "label": st.one_of(texts, small_value),
                "description": texts,
                "tags": sometimes_garbage(st.lists(texts, max_size=2)),
                "schema": small_value,
                "bogus": small_value,
            },
        )
    else:
        bound = st.one_of(st.integers(-3, 10), st.sampled_from(["2", "x"]), small_value)
        declaration = optional_keys(
            {"Type": sometimes_garbage(st.sampled_from(CFN_PARAMETER_TYPES + ["string"]))},
            {
                "Default": default,
                "NoEcho": st.one_of(st.booleans(), st.sampled_from(["true", "TRUE"])),
                "AllowedValues": st.one_of(st.lists(leaves, max_size=3), small_value),
                "AllowedPattern": st.one_of(st.sampled_from(["[a-z]*", "("]), small_value),
                "MinLength": bound,
                "MaxLength": bound,
                "MinValue": bound,
                "MaxValue": bound,
                "ConstraintDescription": st.one_of(texts, small_value),
                "Description": texts,
                "Bogus": small_value,
            },
        )
    return sometimes_garbage(declaration, 12)


def resource(version: TemplateVersion) -> st.SearchStrategy[Any]:
    type_ = st.one_of(
        st.sampled_from(["OS::Heat::None", "OS::Heat::Value", "OS::Heat::Value"]),
        st.sampled_from(TYPES),
        texts,
        st.builds(lambda p: {"get_param": p}, st.sampled_from(PARAMETERS)),
        small_value,
    )
    fields = {
        "type": type_,
        "properties": st.one_of(
            st.fixed_dictionaries({"value": value}, optional={"type": small_value}),
            st.dictionaries(st.sampled_from(["a", "b", "value", "p0"]), value, max_size=3),
            value,
        ),
        "metadata": value,
        "depends_on": st.one_of(
            st.sampled_from(RESOURCES), st.lists(st.sampled_from([*RESOURCES, "nope"]),
                                                 max_size=2), small_value),  # fmt: skip
        "deletion_policy": st.one_of(
            st.sampled_from(["Delete", "Retain", "Snapshot", "retain", "snapshot", "Bad"]),
            small_value,
        ),
        "update_policy": value,
        "description": st.one_of(texts, small_value),
        "condition": st.one_of(st.sampled_from(CONDITIONS), st.booleans(), small_value),
        "external_id": st.one_of(texts, small_value),
        "bogus": small_value,
    }
    if version.is_cfn:
        names = {"type": "Type", "properties": "Properties", "metadata": "Metadata",
                 "depends_on": "DependsOn", "deletion_policy": "DeletionPolicy",
                 "update_policy": "UpdatePolicy", "description": "Description",
                 "condition": "Condition"}  # fmt: skip
        fields = {names.get(k, k): v for k, v in fields.items()}
        type_key = "Type"
    else:
        type_key = "type"
    required = {type_key: fields.pop(type_key)}
    # Mostly the commonest keys, so that many templates are valid.
    common = st.fixed_dictionaries(required, optional={k: fields[k] for k in list(fields)[:1]})
    return sometimes_garbage(st.one_of(common, optional_keys(required, fields)), 12)


def output(version: TemplateVersion) -> st.SearchStrategy[Any]:
    value_key, description_key, condition_key = (
        ("Value", "Description", "Condition") if version.is_cfn else ("value", "description",
                                                                     "condition")
    )  # fmt: skip
    body = optional_keys(
        {value_key: value},
        {
            description_key: st.one_of(texts, small_value),
            condition_key: st.one_of(st.sampled_from(CONDITIONS), st.booleans(), small_value),
        },
    )
    return sometimes_garbage(body, 12)


def condition_definition() -> st.SearchStrategy[Any]:
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


def _hot_key(version: TemplateVersion) -> st.SearchStrategy[str]:
    return st.sampled_from([version.date, *version.aliases])


@st.composite
def templates(draw: st.DrawFn, *, nested: bool = False) -> dict[Any, Any]:
    version = draw(st.sampled_from(VERSIONS))
    names: dict[str, str]
    if version.is_hot:
        doc: dict[Any, Any] = {HOT_KEY: draw(_hot_key(version))}
        names = {s: s for s in ("parameters", "resources", "outputs", "conditions")}
    else:
        doc = {version.key: version.date}
        names = {s: s.capitalize() for s in ("parameters", "resources", "outputs", "conditions")}
    size = 2 if nested else 3
    if draw(st.booleans()):
        doc[names["parameters"]] = draw(
            sometimes_garbage(
                st.dictionaries(st.sampled_from(PARAMETERS), parameter(version), max_size=size), 15
            )
        )
    if version.has_conditions and draw(st.booleans()):
        doc[names["conditions"]] = draw(
            sometimes_garbage(
                st.dictionaries(st.sampled_from(CONDITIONS), condition_definition(), max_size=2),
                15,
            )
        )
    doc[names["resources"]] = draw(
        sometimes_garbage(
            st.dictionaries(st.one_of(st.sampled_from(RESOURCES), keys), resource(version),
                            max_size=size), 20)  # fmt: skip
    )
    if draw(st.booleans()):
        doc[names["outputs"]] = draw(
            sometimes_garbage(
                st.dictionaries(st.sampled_from(["o", "o1", "value"]), output(version),
                                max_size=2), 15)  # fmt: skip
        )
    extras: dict[str, st.SearchStrategy[Any]] = {
        ("Description" if version.is_cfn else "description"): st.one_of(texts, small_value),
    }
    if version.is_hot:
        extras["parameter_groups"] = st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {"parameters": st.lists(st.sampled_from(PARAMETERS + ["nope"]), max_size=2)},
                    optional={"label": texts, "description": small_value},
                ),
                max_size=2,
            ),
            small_value,
        )
    else:
        extras["Mappings"] = st.one_of(
            st.dictionaries(
                st.sampled_from(["m0", "m1"]),
                st.dictionaries(st.sampled_from(["k0", "k1"]), st.one_of(
                    st.dictionaries(st.sampled_from(["v0", "v1"]), value, max_size=2),
                    small_value), max_size=2),
                max_size=2,
            ),
            small_value,
        )  # fmt: skip
    extras["bogus_section"] = small_value
    for key, strategy in extras.items():
        if draw(st.integers(0, 4)) == 0:
            doc[key] = draw(strategy)
    return doc


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


REGISTRY_KEYS = ["My::T", "My::*", "My::Wild::*", "OS::Heat::Alias", "OS::*", "nested.yaml",
                 "*", "AWS::EC2::Instance", "OS::Heat::Value"]  # fmt: skip
REGISTRY_TARGETS = ["OS::Heat::None", "OS::Heat::Value", "My::*", "OS::Heat::*", "My::T",
                    "nested.yaml", "self.yaml", "gen.yaml", *MISSING_FILES, "My::Wild::*"]  # fmt: skip
HOOKS = ["pre-create", "pre-update", "post-delete", "pre-bogus"]


def registries() -> st.SearchStrategy[Any]:
    target = st.one_of(st.sampled_from(REGISTRY_TARGETS), st.none(), small_value)
    per_resource = st.dictionaries(
        st.one_of(st.sampled_from(REGISTRY_KEYS), st.sampled_from(["hooks", "restricted_actions"])),
        st.one_of(target, st.sampled_from(HOOKS), st.lists(st.sampled_from(HOOKS), max_size=2),
                  st.sampled_from(["update", "replace", "bad"])),
        max_size=3,
    )  # fmt: skip
    resources = st.dictionaries(
        st.sampled_from([*RESOURCES, "r*", "*"]), sometimes_garbage(per_resource), max_size=2
    )
    return sometimes_garbage(
        st.builds(
            lambda top, res: {**top, **({"resources": res} if res is not None else {})},
            st.dictionaries(st.sampled_from(REGISTRY_KEYS), target, max_size=3),
            st.one_of(st.none(), resources),
        ),
        10,
    )


parameter_values = st.dictionaries(
    st.one_of(st.sampled_from([*PARAMETERS, "nope"]), keys),
    st.one_of(leaves, small_value, st.sampled_from(["a,b", '{"k": [1]}', "12", "yes"])),
    max_size=3,
)


def environments() -> st.SearchStrategy[Any]:
    sink = st.one_of(
        st.fixed_dictionaries({"type": st.just("zaqar-queue"), "target": texts},
                              optional={"ttl": st.one_of(st.integers(-1, 10), small_value)}),
        small_value,
    )  # fmt: skip
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
    return st.one_of(st.none(), env, env, env, st.integers(0, 20).flatmap(
        lambda n: small_value if n == 0 else st.just(None)))  # fmt: skip


# -- running one case --------------------------------------------------------------------------


def check_error(err: BaseException) -> None:
    assert isinstance(err, KilnError), f"{type(err).__name__}: {err}"
    assert isinstance(err.message, str) and err.message
    assert isinstance(str(err), str)
    assert isinstance(err.path, tuple)
    if isinstance(err, ValidationFailed):
        for inner in err.errors:
            check_error(inner)


def guarded(action: Callable[[], Any]) -> Any:
    """Run ``action``; a KilnError is an accepted outcome (returns None), anything else fails."""
    try:
        return action()
    except KilnError as err:
        check_error(err)
        return None


def exercise(case: dict[str, Any], types: ResourceTypes | None) -> StackDefinition | None:
    def build() -> StackDefinition:
        return build_stack(
            case["template"],
            environment=case["environment"],
            environment_files=case["environment_files"],
            files=case["files"],
            parameters=case["parameters"],
            types=types,
            check_values=case["check_values"],
            allow_missing=case["allow_missing"],
        )

    stack: StackDefinition | None = guarded(build)
    if stack is None:
        return None
    for err in stack.errors:
        check_error(err)
    if stack.errors:
        return stack
    guarded(lambda: validate_document(stack))
    guarded(lambda: resolved_resources(stack))
    guarded(lambda: resolved_outputs(stack))
    guarded(lambda: render_text(stack.graph))
    guarded(lambda: render_dot(stack.graph))
    guarded(lambda: render_text(stack.graph, reduce=True))
    guarded(lambda: stack.graph.levels())
    guarded(lambda: [out.to_dict() for out in stack.output_values().values()])
    guarded(lambda: CreatedState().create_all(stack))
    # After creation get_attr and get_resource give values: resolve everything again.
    guarded(lambda: [out.to_dict() for out in stack.output_values().values()])
    guarded(lambda: resolved_resources(stack))
    guarded(lambda: resolved_outputs(stack))
    return stack


def to_yaml(data: Any) -> str | None:
    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, RecursionError):  # the dumper recurses: no text for deep data
        return None


@st.composite
def cases(draw: st.DrawFn, template: st.SearchStrategy[Any] | None = None) -> dict[str, Any]:
    environment = draw(environments())
    env_files: list[tuple[str, Any]] = []
    if draw(st.integers(0, 4)) == 0:
        env_files.append(("env1.yaml", draw(environments())))
    if template is None:
        template = st.integers(0, 30).flatmap(lambda n: small_value if n == 0 else templates())
    return {
        "template": draw(template),
        "environment": environment,
        "environment_files": env_files,
        "files": draw(files_maps()),
        "parameters": draw(st.one_of(st.none(), parameter_values)),
        "check_values": draw(st.booleans()),
        "allow_missing": draw(st.booleans()),
    }


# A skeleton every version accepts, so that most cases get past validation and their
# random values are resolved as outputs, before and after simulated creation.
HOT_SKELETON_PARAMETERS = {
    "p0": {"type": "string", "default": "a,b"},
    "p1": {"type": "json", "default": {"k": [1, "x"], "n": None}},
    "p2": {"type": "comma_delimited_list", "default": "x,y"},
}
CFN_SKELETON_PARAMETERS = {
    "p0": {"Type": "String", "Default": "a,b"},
    "p1": {"Type": "Json", "Default": {"k": [1, "x"]}},
    "p2": {"Type": "CommaDelimitedList", "Default": "x,y"},
}


@st.composite
def skeleton_templates(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(VERSIONS))
    hot = version.is_hot
    t, p, v = ("type", "properties", "value") if hot else ("Type", "Properties", "Value")
    resources: dict[str, Any] = {
        "r0": {t: "OS::Heat::Value", p: {"value": draw(st.one_of(leaves, value))}},
        "r1": {t: "OS::Heat::None"},
        "r2": {t: "OS::Heat::Value", p: {"value": draw(value)}},
    }
    doc: dict[str, Any] = {
        ("parameters" if hot else "Parameters"): (
            HOT_SKELETON_PARAMETERS if hot else CFN_SKELETON_PARAMETERS
        ),
        ("resources" if hot else "Resources"): resources,
        ("outputs" if hot else "Outputs"): {"o": {v: draw(value)}, "o1": {v: draw(value)}},
    }
    doc[version.key] = draw(_hot_key(version)) if hot else version.date
    if version.has_conditions:
        first = {"equals": [{"get_param": "p0"}, "a,b"]} if hot else {"Fn::Equals": ["a", "a"]}
        doc["conditions" if hot else "Conditions"] = {"c0": first, "c1": False, "c2": True}
    if not hot:
        doc["Mappings"] = {"m0": {"k0": {"v0": "found", "v1": [1, {"a": 2}]}}}
    return doc


@FUZZ
@given(cases())
def test_random_templates_as_data(case: dict[str, Any]) -> None:
    exercise(case, HEAT_TEST_TYPES)
    exercise(case, None)


@FUZZ
@given(cases(skeleton_templates()))
def test_random_values_in_a_valid_skeleton(case: dict[str, Any]) -> None:
    exercise(case, HEAT_TEST_TYPES)


@FEWER
@given(cases())
def test_random_templates_as_yaml_text(case: dict[str, Any]) -> None:
    text = to_yaml(case["template"])
    if text is None:
        return
    env = case["environment"]
    env_text = to_yaml(env) if isinstance(env, dict) else env
    exercise({**case, "template": text, "environment": env_text}, HEAT_TEST_TYPES)
