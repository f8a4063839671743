"""Mutated valid calls for the evaluator fuzz tests.

Random data seldom gets every part of a call right, so it rarely reaches the code
that handles one bad part among good ones. Here each call starts from a valid
example of its function (the names refer to the skeleton stack of
evaluator_fuzz_support.py) and has a few of its parts, anywhere in its argument,
replaced by a special value, any scalar, a random value or another mutated call,
or removed.
"""

from __future__ import annotations

import copy
from typing import Any

from evaluator_fuzz_values import SPECIALS, Strategy, known_functions, scalars, version_values
from hypothesis import strategies as st

from kiln.template.versions import TemplateVersion

_STR_REPLACE = [
    {"template": "%x% and $var", "params": {"%x%": "1", "$var": [1, {"a": "b"}]}},
    {"template": "port %x%", "params": {"%x%": 80}},
]
_GET_ATTR = [["r0", "value"], ["r0", "value", "a", 1, "b"], ["r0"], ["r2", "show"]]
_LOGICAL = [["c0", True], ["c1", "c2", False], [{"not": "c1"}, {"equals": [1, 1]}]]
_CFN_LOGICAL = [["c0", True], ["c1", "c0", False], [{"Fn::Not": ["c1"]}, {"Fn::Equals": [1, 1]}]]
VALID_ARGS: dict[str, list[Any]] = {
    "get_param": ["p0", ["p1", "k", 0], ["p2", 1], "OS::stack_name", "AWS::Region"],
    "Ref": ["r0", "p0", "AWS::StackName"],
    "get_resource": ["r0", "r1"],
    "get_attr": _GET_ATTR,
    "Fn::GetAtt": [["r0", "value"]],
    "get_file": ["f.txt", "nested.yaml"],
    "list_join": [[",", ["a", "b"], ["c"]], [" ", [{"k": "v"}, [1]]]],
    "Fn::Join": [[",", ["a", "b"]]],
    "str_replace": _STR_REPLACE,
    "str_replace_strict": _STR_REPLACE,
    "str_replace_vstrict": _STR_REPLACE,
    "Fn::Replace": [[{"%x%": "1", "$y": "2"}, "a %x% $y"]],
    "str_split": [[",", "a,b,c", 1], [",", "a,b"], [None, "a b"]],
    "Fn::Split": [[",", "a,b"]],
    "digest": [["sha256", "abc"], ["md5", "é"]],
    "Fn::Base64": ["abc"],
    "repeat": [
        {"for_each": {"%x%": ["a", "b"], "%y%": ["c"]}, "template": {"k%x%": "%y%"}},
        {"for_each": {"%x%": ["a", "b"], "%y%": ["c", "d"]}, "template": "%x%%y%",
         "permutations": False},
        {"for_each": {"%k%": {"alpha": 1}}, "template": ["%k%"]},
    ],
    "map_merge": [[{"a": 1}, {"b": 2}, None]],
    "map_replace": [[{"a": 1, "b": 2}, {"keys": {"a": "c"}, "values": {2: 3}}]],
    "filter": [[[1], [1, 2, 3]]],
    "list_concat": [[[1], [2], None]],
    "list_concat_unique": [[[1], [1, {"a": 2}]]],
    "contains": [["a", ["a", "b"]], ["b", "abc"]],
    "make_url": [
        {"scheme": "https", "host": "h", "port": 443, "path": "/p", "query": {"a": "b"},
         "fragment": "f", "username": "u", "password": "p"},
        {"scheme": "http", "host": "::1", "port": "8080"},
    ],
    "yaql": [{"expression": "$.data.a", "data": {"a": [1, 2]}}, {"expression": "$.data.len()",
                                                                  "data": [1]}],
    "if": [["c0", "yes", "no"], ["c1", "x"], [{"equals": [1, 1]}, 1, 2]],
    "Fn::If": [["c0", "yes", "no"]],
    "equals": [["a", "a"], [{"get_param": "p0"}, "a,b"]],
    "Fn::Equals": [["a", "a"], [{"Ref": "p0"}, "a,b"]],
    "not": ["c0", {"equals": [1, 2]}],
    "Fn::Not": [["c0"]],
    "and": _LOGICAL,
    "or": _LOGICAL,
    "Fn::And": _CFN_LOGICAL,
    "Fn::Or": _CFN_LOGICAL,
    "resource_facade": ["metadata", "deletion_policy"],
    "Fn::ResourceFacade": ["Metadata", "UpdatePolicy"],
    "Fn::Select": [[1, ["a", "b"]], ["a", {"a": 1}], [0, '["x"]'], ["1", "[1, 2]"]],
    "Fn::MemberListToMap": [["k", "v", [".member.0.k=a", ".member.0.v=b", "x.member.1.k=c"]]],
    "Fn::FindInMap": [["m0", "k0", "v0"], ["m0", "k0", "v1"]],
    "Fn::GetAZs": ["", "region"],
}  # fmt: skip


def slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every part of ``value``, itself included (keys by name, items by index)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(slots(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(slots(item, (*path, index)))
    return found


REMOVE = object()  # as a replacement: remove the part


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with the part at ``path`` replaced by ``new`` (or removed, for REMOVE)."""
    if not path:
        return None if new is REMOVE else new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        if not rest and new is REMOVE:
            del out[head]
        else:
            out[head] = replaced(value[head], rest, new)
        return out
    items = list(value)
    if not rest and new is REMOVE:
        del items[head]
    else:
        items[head] = replaced(value[head], rest, new)
    return items


def version_names(version: TemplateVersion) -> list[str]:
    """The functions ``version`` knows that have examples (some fit only other versions)."""
    return [n for n in known_functions(version) if n in VALID_ARGS]


@st.composite
def mutated_calls(draw: st.DrawFn, version: TemplateVersion, depth: int = 2) -> dict[str, Any]:
    """A valid call of a function of ``version`` with up to three parts changed."""
    name = draw(st.sampled_from(version_names(version)))
    args = copy.deepcopy(draw(st.sampled_from(VALID_ARGS[name])))
    replacements: list[Strategy] = [
        st.sampled_from(SPECIALS),
        st.sampled_from(SPECIALS),
        scalars,
        version_values(version, inputs=False),
        st.just(REMOVE),
    ]
    if depth > 0:
        replacements.append(mutated_calls(version, depth - 1))
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(slots(args)))
        args = replaced(args, where, draw(st.one_of(replacements)))
    return {name: args}
