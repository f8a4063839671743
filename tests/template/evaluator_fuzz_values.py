"""Random values for the evaluator fuzz tests: data with intrinsic function calls.

Values are nested data in which calls of intrinsic functions appear, with
arguments of each function's shape (mostly) and of any other shape: nulls, huge,
negative and infinite numbers, unicode, empty collections, deep nesting, nested
calls. Names (resources, parameters, conditions, files) come from small fixed
sets so that references often resolve. Used by evaluator_fuzz_support.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

from hypothesis import strategies as st

from kiln.template.functions.references import build_removed
from kiln.template.versions import TemplateVersion, all_versions

VERSIONS = all_versions()
UNKNOWN_FUNCTIONS = ("Fn::Sub", "get_input", "Fn::ImportValue")  # plain data everywhere
ALL_FUNCTIONS = tuple(
    sorted({n for v in VERSIONS for n in (*v.functions, *v.condition_functions)})
    + list(UNKNOWN_FUNCTIONS)
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

# Wider than Python's 4300-digit limit for int <-> decimal text; YAML text can spell
# such an int in hexadecimal (HUGE_HEX is written unquoted in YAML text). Drawn
# through flatmap() so that nothing needs its decimal repr before a failure is shown.
HUGE_HEX = "0x" + "f" * 5000
HUGE = int(HUGE_HEX, 16)
# Deeper than any bound on nesting, as data and as JSON text.
DEEP_LIST: Any = "x"
for _ in range(400):
    DEEP_LIST = [DEEP_LIST]
DEEP_JSON = "[" * 3000 + "]" * 3000  # deeper than json.loads can go
DEEPISH_JSON = "[" * 900 + "]" * 900  # loads, but deeper than the loader allows
SAMPLE_TEXTS = [
    *[
        "",
        " ",
        "%x%",
        "$var",
        ",",
        "a,b, c",
        "[1, 2]",
        "true",
        "no",
        "017",
        "1e5",
        "é∂😀",
        "\x00",
        "a\nb",
        "*",
        "md5",
        "sha256",
        "sha3_512",
        "http",
        "::1",
    ],
    *[
        "[::1]",
        ".member.0.k=a",
        "x.member.1.v=b",
        "Delete",
        "retain",
        "Snapshot",
        "bad",
        "{{{",
        "1:20",
        ".inf",
        "-1",
    ],
    '{"a": 1}',
    "9" * 5000,
    ".member." + "9" * 5000 + ".k=a",
    DEEP_JSON,
    DEEPISH_JSON,
    '{"a": ' * 200 + "1" + "}" * 200,
    HUGE_HEX,
]

numbers = st.one_of(
    st.integers(-5, 5),
    st.integers(),
    st.sampled_from([10**30, -(2**63), 2**64, 10**400, -(10**400), 65536, 0]),
    st.floats(),
    st.sampled_from([math.inf, -math.inf, math.nan, 0.5, -0.0, 1e308, 2.0]),
)
texts = st.one_of(
    st.text(max_size=8),
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.sampled_from(SAMPLE_TEXTS),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
leaves = st.one_of(
    scalars,
    numbers,
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
    st.sampled_from([[], {}, [None], {"a": None}]),
)
# Inputs only: the loader and the data checks of build_stack keep these from the
# evaluator, so values given straight to a parser leave them out.
input_leaves = st.one_of(
    leaves,
    st.integers(0, 40).flatmap(lambda n: st.just(DEEP_LIST) if n == 0 else st.none()),
    st.integers(0, 40).flatmap(lambda n: st.just(HUGE) if n == 0 else st.none()),
)
keys = st.one_of(
    st.sampled_from(NAMES),
    texts,
    st.sampled_from(["template", "params", "for_each", "permutations", "keys", "values"]),
    st.sampled_from([None, 0, 1, True, 1.5]),  # non-string keys, as YAML can give
)
Strategy = st.SearchStrategy[Any]


# -- function calls --------------------------------------------------------------------------


# Values that break careless code: wrong types, extremes, empties, and text that is
# too long or too deep for what reads it (numbers, JSON, members, patterns).
SPECIALS = [None, True, False, 0, -1, 2**64, 10**400, -(10**400), math.inf, -math.inf, math.nan,
            1.5, -0.0, "", "9" * 5000, [], {}, [None], {"": None}, "é\x00", DEEP_JSON,
            DEEPISH_JSON, ".member." + "9" * 5000 + ".k=a", "(" * 2000 + ")" * 2000,
            "a{99999999999999999999}", "[[a]"]  # fmt: skip


def pick(c: Strategy, *samples: Any) -> Strategy:
    """An argument part: one of ``samples``, a special value, any scalar, or any value ``c``."""
    return st.one_of(st.sampled_from(samples), st.sampled_from(SPECIALS), scalars, c)


def a_list(*parts: Strategy) -> Strategy:
    return st.tuples(*parts).map(list)


def list_or(c: Strategy) -> Strategy:
    return st.one_of(st.lists(c, max_size=3), c)


def a_map(c: Strategy, *names: str) -> Strategy:
    return st.dictionaries(
        st.one_of(st.sampled_from(names), keys) if names else keys, c, max_size=3
    )


def condition(c: Strategy) -> Strategy:
    return st.one_of(st.booleans(), st.sampled_from(CONDITIONS), c)


def path_items(c: Strategy) -> Strategy:
    return st.lists(pick(c, "a", "0", "value", "k", 0, 1, -1), max_size=3)


def _get_param(c: Strategy) -> Strategy:
    name = pick(c, *PARAMETERS, *PSEUDO, "nope")
    return st.one_of(name, st.builds(lambda n, p: [n, *p], name, path_items(c)))


def _get_attr(c: Strategy) -> Strategy:
    res, attr = pick(c, *RESOURCES, "nope"), pick(c, *ATTRIBUTES)
    return st.one_of(
        st.builds(lambda r, a, p: [r, a, *p], res, attr, path_items(c)),
        a_list(res),
        a_list(res, attr),
    )


def _str_replace(c: Strategy) -> Strategy:
    return st.fixed_dictionaries(
        {
            "template": pick(c, "%x% and $var", "a%x%a", ""),
            "params": st.one_of(a_map(c, "%x%", "$var", "a", ""), c),
        },
        optional={"extra": c},
    )


def _repeat(c: Strategy) -> Strategy:
    values = st.one_of(st.lists(pick(c, "a", "b"), max_size=3), a_map(c), c)
    return st.fixed_dictionaries(
        {
            "for_each": st.one_of(
                st.dictionaries(
                    st.one_of(st.sampled_from(["%x%", "$v"]), keys), values, max_size=2
                ),
                c,
            ),
            "template": c,
        },
        optional={"permutations": pick(c, True, False)},
    )


def _make_url(c: Strategy) -> Strategy:
    part = pick(c, "h", "")
    return st.fixed_dictionaries(
        {},
        optional={
            "scheme": pick(c, "http", "https", "a:b", ""),
            "host": pick(c, "h", "::1", "[::1]", "é"),
            "port": pick(c, 80, 0, 65536, "80", " 8 ", "+1", "x", "9" * 5000),
            "path": part,
            "query": st.one_of(a_map(c), part),
            "fragment": part,
            "username": part,
            "password": part,
            "bogus": part,
        },
    )


# yaql_function.py is changed by another helper as this is written: only small, benign
# expressions here (its own tests cover hostile ones: budgets, quotas).
YAQL_EXPRESSIONS = (
    "$.data",
    "$.data.a",
    "$.data.len()",
    "$.data.keys()",
    "1 + 1",
    "null",
    "$.data.where($ > 1)",
    "$.data.select($ * 2)",
    "$.data.join(',')",
    "$.data[0]",
    "1 /",
    "",
    "$",
    "let(x => 1) -> $x",
    "$.data.toUpper()",
)


def _yaql(c: Strategy) -> Strategy:
    expression = st.one_of(st.sampled_from(YAQL_EXPRESSIONS), c)
    return st.one_of(
        st.fixed_dictionaries({"expression": expression}, optional={"data": c, "bogus": c}), c
    )


def _logical(c: Strategy) -> Strategy:
    return st.one_of(st.lists(condition(c), max_size=3), c)


SHAPES: dict[str, Callable[[Strategy], Strategy]] = {
    "get_param": _get_param,
    "Ref": lambda c: pick(c, *RESOURCES, *PARAMETERS, *PSEUDO, "nope"),
    "get_resource": lambda c: pick(c, *RESOURCES, "nope"),
    "get_attr": _get_attr,
    "Fn::GetAtt": _get_attr,
    "get_file": lambda c: pick(c, *FILES, *MISSING_FILES),
    "list_join": lambda c: st.builds(
        lambda d, ls: [d, *ls], pick(c, ",", "", " "), st.lists(list_or(c), max_size=3)
    ),
    "Fn::Join": lambda c: a_list(pick(c, ","), list_or(c)),
    "str_replace": _str_replace,
    "str_replace_strict": _str_replace,
    "str_replace_vstrict": _str_replace,
    "Fn::Replace": lambda c: a_list(st.one_of(a_map(c, "%x%", "$var"), c), pick(c, "%x%$var")),
    "str_split": lambda c: st.builds(
        lambda d, s, i: [d, s, *i],
        pick(c, ",", "", " "),
        pick(c, "a,b,c"),
        st.lists(pick(c, 0, 1, -1, 5, "1"), max_size=1),
    ),
    "Fn::Split": lambda c: a_list(pick(c, ",", ""), pick(c, "a,b")),
    "digest": lambda c: a_list(pick(c, "md5", "SHA256", "shake_128", "x"), pick(c, "abc")),
    "Fn::Base64": lambda c: pick(c, "abc"),
    "repeat": _repeat,
    "map_merge": lambda c: st.one_of(st.lists(st.one_of(a_map(c), c), max_size=3), c),
    "map_replace": lambda c: a_list(
        st.one_of(a_map(c, "a", "b"), c),
        st.one_of(
            st.fixed_dictionaries(
                {}, optional={"keys": a_map(c, "a", "b"), "values": a_map(c), "bogus": c}
            ),
            c,
        ),
    ),
    "filter": lambda c: a_list(list_or(c), list_or(c)),
    "list_concat": lambda c: st.lists(list_or(c), max_size=3),
    "list_concat_unique": lambda c: st.lists(list_or(c), max_size=3),
    "contains": lambda c: a_list(c, st.one_of(list_or(c), texts)),
    "make_url": _make_url,
    "yaql": _yaql,
    "if": lambda c: st.one_of(a_list(condition(c), c, c), a_list(condition(c), c)),
    "Fn::If": lambda c: a_list(condition(c), c, c),
    "equals": lambda c: a_list(c, c),
    "Fn::Equals": lambda c: a_list(c, c),
    "not": condition,
    "Fn::Not": lambda c: a_list(condition(c)),
    "and": _logical,
    "or": _logical,
    "Fn::And": _logical,
    "Fn::Or": _logical,
    "resource_facade": lambda c: pick(c, "metadata", "deletion_policy", "update_policy"),
    "Fn::ResourceFacade": lambda c: pick(c, "Metadata", "DeletionPolicy", "UpdatePolicy"),
    "Fn::Select": lambda c: a_list(
        pick(c, 0, 1, -1, 7, "0", "a"),
        st.one_of(
            list_or(c),
            a_map(c, "a", "0"),
            st.sampled_from(['["a", "b"]', '{"a": 1}', "{", "3", DEEP_JSON, DEEPISH_JSON]),
        ),
    ),
    "Fn::MemberListToMap": lambda c: a_list(
        pick(c, "k"),
        pick(c, "v"),
        st.one_of(
            st.lists(
                pick(
                    c,
                    ".member.0.k=a",
                    ".member.0.v=b",
                    "p.member.1.k=c",
                    ".member." + "7" * 5000 + ".k=x",
                ),
                max_size=3,
            ),
            c,
        ),
    ),
    "Fn::FindInMap": lambda c: a_list(pick(c, "m0", "m1"), pick(c, "k0", "k1"), pick(c, "v0")),
    "Fn::GetAZs": lambda c: pick(c, ""),
}


def calls(children: Strategy, names: tuple[str, ...]) -> Strategy:
    """``{name: args}``: args of the function's shape (mostly), or anything at all."""

    def with_args(name: str) -> Strategy:
        shape = SHAPES.get(name)
        args = children if shape is None else st.one_of(shape(children), shape(children), children)
        return args.map(lambda a: {name: a})

    return st.sampled_from(names).flatmap(with_args)


def values(
    names: tuple[str, ...] = ALL_FUNCTIONS, max_leaves: int = 10, *, inputs: bool = True
) -> Strategy:
    """Nested data with calls of ``names``; with ``inputs``, oddities only inputs can hold."""
    return st.recursive(
        input_leaves if inputs else leaves,
        lambda children: st.one_of(
            calls(children, names),
            calls(children, names),
            st.lists(children, max_size=3),
            st.dictionaries(keys, children, max_size=3),
        ),
        max_leaves=max_leaves,
    )


def known_functions(version: TemplateVersion) -> tuple[str, ...]:
    """The function names ``version`` knows, in either context, but for removed ones
    (which only ever fail validation)."""
    tables = (version.functions, version.condition_functions)
    names = (n for table in tables for n, spec in table.items() if spec.build is not build_removed)
    return tuple(dict.fromkeys(names))


@cache
def version_values(version: TemplateVersion, *, inputs: bool = True) -> Strategy:
    """Values whose calls are of functions ``version`` knows (and a few unknown names)."""
    names = (*known_functions(version), *UNKNOWN_FUNCTIONS)
    return values(names, max_leaves=12, inputs=inputs)


value = values()
small_value = values(max_leaves=4)


def sometimes_garbage(strategy: Strategy, one_in: int = 8) -> Strategy:
    """``strategy``, or about once in ``one_in`` draws any value at all."""
    return st.integers(1, one_in).flatmap(lambda n: small_value if n == 1 else strategy)
