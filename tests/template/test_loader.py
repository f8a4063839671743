"""Tests for kiln.template.loader: JSON-or-YAML text to data, positions, limits, errors."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kiln.core.errors import (
    EnvironmentParseError,
    KilnError,
    RequestLimitExceeded,
    TemplateParseError,
)
from kiln.core.paths import Location
from kiln.template import loader
from kiln.template.loader import (
    MAX_DEPTH,
    MAX_NODES,
    Document,
    SourceMap,
    load_document,
    load_environment,
    load_template,
)
from kiln.template.source_map import json_marks

HOT = "heat_template_version: 2016-10-14\n"


def data_of(text: str | bytes) -> Any:
    return load_document(text, "t.yaml").data


def parse_error(text: str | bytes, **kwargs: Any) -> TemplateParseError:
    with pytest.raises(TemplateParseError) as info:
        load_document(text, "t.yaml", **kwargs)
    return info.value


# --- JSON first, then YAML (reference 8.1) -------------------------------------------


def test_json_is_parsed_with_json_rules() -> None:
    data = data_of('{"heat_template_version": "2016-10-14", "a": 1e5, "b": "yes"}')
    assert data == {"heat_template_version": "2016-10-14", "a": 100000.0, "b": "yes"}
    assert isinstance(data["a"], float)


def test_yaml_reading_of_the_same_scalars_differs() -> None:
    # Not JSON (unquoted values), so YAML 1.1 rules apply: 1e5 has no dot and stays text.
    assert data_of("a: 1e5\nb: yes\nc: 1.0e+5\n") == {"a": "1e5", "b": True, "c": 100000.0}


def test_json_duplicate_keys_last_wins() -> None:
    assert data_of('{"a": 1, "a": 2}') == {"a": 2}


def test_json_nan_and_infinity_are_accepted_like_json_loads() -> None:
    data = data_of('{"a": NaN, "b": -Infinity}')
    assert math.isnan(data["a"]) and data["b"] == -math.inf


def test_json_null_document_is_empty_mapping() -> None:
    assert data_of("null") == {}


# --- YAML 1.1 typing (reference 8.2) ----------------------------------------------------

YAML_SCALARS = [
    ("yes", True),
    ("Yes", True),
    ("YES", True),
    ("no", False),
    ("on", True),
    ("OFF", False),
    ("true", True),
    ("False", False),
    ("y", "y"),
    ("n", "n"),
    ("017", 15),
    ("0x1F", 31),
    ("1_000", 1000),
    ("0o17", "0o17"),
    ("0b101", 5),
    ("1:20", 80),
    ("+12", 12),
    ("-3", -3),
    ("1.5", 1.5),
    ("1e5", "1e5"),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("~", None),
    ("null", None),
    ("", None),
    ("'yes'", "yes"),
    ('"017"', "017"),
    ("plain text", "plain text"),
]


@pytest.mark.parametrize(("text", "expected"), YAML_SCALARS)
def test_yaml_1_1_implicit_typing(text: str, expected: Any) -> None:
    value = data_of(f"v: {text}\n")["v"]
    assert value == expected
    assert type(value) is type(expected)


def test_nan() -> None:
    assert math.isnan(data_of("v: .nan")["v"])


@pytest.mark.parametrize(
    "text",
    ["2016-10-14", "2001-12-14 21:59:43", "2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43Z"],
)
def test_timestamps_stay_strings(text: str) -> None:
    data = data_of(f"d: {text}\nl: [{text}]\n{text}: k\nt: !!timestamp {text}\n")
    assert data == {"d": text, "l": [text], text: "k", "t": text}


def test_unquoted_version_date_is_a_string() -> None:
    assert load_template(HOT).data == {"heat_template_version": "2016-10-14"}
    cfn = load_template("AWSTemplateFormatVersion: 2010-09-09\n").data
    assert cfn == {"AWSTemplateFormatVersion": "2010-09-09"}


def test_yaml_booleans_and_null_as_keys() -> None:
    data = data_of("conditions:\n  off: true\n  yes: false\n  2: two\n  ~: nothing\n")
    assert data == {"conditions": {False: True, True: False, 2: "two", None: "nothing"}}
    assert list(data["conditions"]) == [False, True, 2, None]


def test_strings_are_str() -> None:
    data = data_of("a: text\nb: 'quoted'\nc: |\n  block\nd: >\n  folded\n  line\n")
    assert data == {"a": "text", "b": "quoted", "c": "block\n", "d": "folded line\n"}
    assert all(type(v) is str for v in data.values())


STANDARD_TAGS = [
    ("!!str 12", "12"),
    ("!!str yes", "yes"),
    ("!!int '12'", 12),
    ("!!float 3", 3.0),
    ("!!bool yes", True),
    ("!!null x", None),
    ("!!binary aGVsbG8=", b"hello"),
    ("! 12", 12),
    ("! '12'", 12),  # as PyYAML: the non-specific tag types quoted text too
    ("!<tag:yaml.org,2002:str> 5", "5"),
    ("!!map {a: 1}", {"a": 1}),
    ("!!seq [1]", [1]),
    ("!!set {x, y}", {"x": None, "y": None}),
    ("!!omap [{x: 1}, {y: 2}]", [["x", 1], ["y", 2]]),
    ("!!pairs [{x: 1}, {x: 2}]", [["x", 1], ["x", 2]]),
]


@pytest.mark.parametrize(("text", "expected"), STANDARD_TAGS)
def test_standard_tags(text: str, expected: Any) -> None:
    value = data_of(f"v: {text}\n")["v"]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("text", "tag", "column"),
    [
        ("a: !Ref b\n", "'!Ref'", 4),
        ("a: {b: !GetAtt [x, y]}\n", "'!GetAtt'", 8),
        ("a: !!python/object:os.system x\n", "'tag:yaml.org,2002:python/object:os.system'", 4),
        ("a: !!python/tuple [1]\n", "'tag:yaml.org,2002:python/tuple'", 4),
        ("a: <<\n", "'tag:yaml.org,2002:merge'", 4),
        ("a: =\n", "'tag:yaml.org,2002:value'", 4),
    ],
)
def test_application_tags_are_rejected(text: str, tag: str, column: int) -> None:
    error = parse_error(text)
    assert f"could not determine a constructor for the tag {tag}" in error.message
    assert error.location == Location("t.yaml", 1, column)
    assert f"in line 1, column {column}" in error.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!str {b: 1}\n", "expected a scalar node, but found mapping"),
        ("a: !!seq x\n", "expected a sequence node, but found scalar"),
        ("a: !!map [1]\n", "expected a mapping node, but found sequence"),
        ("a: !!int abc\n", "invalid value 'abc' for the tag 'tag:yaml.org,2002:int'"),
        ("a: !!bool maybe\n", "invalid value 'maybe'"),
        ("a: !!float x\n", "invalid value 'x'"),
        ("a: " + "9" * 5000 + "\n", "for the tag 'tag:yaml.org,2002:int'"),
        # the same magnitude in hexadecimal or binary (evaluator fuzz finding: the int
        # loaded, and every message or JSON text showing it raised ValueError)
        ("a: 0x" + "f" * 5000 + "\n", "invalid value '0xfffff"),
        ("a: 0b" + "1" * 20000 + "\n", "invalid value '0b11111"),
        ("a: !!omap [{x: 1, y: 2}]\n", "expected a mapping of length 1, but found 2 items"),
    ],
)
def test_standard_tag_misuse_is_a_parse_error(text: str, message: str) -> None:
    error = parse_error(text)
    assert message in error.message
    assert error.location is not None and error.location.line == 1


def test_duplicate_yaml_keys_last_wins() -> None:
    assert data_of("a: 1\nb: 2\na: 3\n") == {"a": 3, "b": 2}


def test_unhashable_key_is_an_error_with_location() -> None:
    error = parse_error("x: 1\n? [a, b]\n: 2\n")
    assert "found unhashable key in line 2, column 3" in error.message
    assert "while constructing a mapping in line 1, column 1" in error.message
    assert error.location == Location("t.yaml", 2, 3)
    assert "found unhashable key" in parse_error("{{a: 1}: 2}").message


def test_anchors_and_aliases_are_shared_values() -> None:
    data = data_of("a: &x [1, {b: 2}]\nc: *x\nd: [*x, *x]\ns: &s text\nt: *s\n")
    assert data["a"] == [1, {"b": 2}]
    assert data["c"] is data["a"] and data["d"][0] is data["a"]
    assert data["t"] == "text"


def test_merge_keys() -> None:
    data = data_of(
        "base: &b {x: 1, y: 2}\n"
        "other: &o {x: 9, z: 5}\n"
        "d: {<<: *b, y: 3}\n"
        "e: {y: 4, <<: [*b, *o]}\n"
        "f: {<<: *o, <<: *b}\n"
    )
    assert data["d"] == {"x": 1, "y": 3}
    assert data["e"] == {"x": 1, "y": 4, "z": 5}  # own keys win, then earlier mappings
    assert data["f"] == {"x": 9, "z": 5, "y": 2}
    assert data["base"] == {"x": 1, "y": 2}  # merging does not modify the source


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: {<<: 1}\n", "expected a mapping or list of mappings for merging, but found scalar"),
        ("a: {<<: [{x: 1}, 2]}\n", "expected a mapping for merging, but found scalar"),
    ],
)
def test_merge_errors(text: str, message: str) -> None:
    assert message in parse_error(text).message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: *nope\n", "found undefined alias 'nope'"),
        ("a: &r [1, *r]\n", "found recursive alias 'r'"),
        ("a: 1\n---\nb: 2\n", "expected a single document in the stream"),
    ],
)
def test_alias_and_document_errors(text: str, message: str) -> None:
    assert message in parse_error(text).message


@pytest.mark.parametrize("text", ["", "   \n", "# only a comment\n", "~", "---\n...\n"])
def test_empty_document_is_empty_mapping(text: str) -> None:
    assert data_of(text) == {}
    assert load_environment(text).data == {}


# --- Document shape checks ------------------------------------------------------------


@pytest.mark.parametrize("text", ["[1, 2]", "- a\n", "just text", "12", '"x"'])
def test_template_not_a_mapping(text: str) -> None:
    with pytest.raises(
        TemplateParseError, match="The template is not a JSON object or YAML mapping"
    ):
        load_template(text, "t.yaml")


@pytest.mark.parametrize("text", ["[1, 2]", "- a\n", "just text"])
def test_environment_not_a_mapping(text: str) -> None:
    with pytest.raises(
        EnvironmentParseError, match="The environment is not a valid YAML mapping data type"
    ):
        load_environment(text)


def test_template_needs_a_version_key() -> None:
    with pytest.raises(TemplateParseError, match="Template format version not found") as info:
        load_template("resources: {}\n", "t.yaml")
    assert info.value.location == Location("t.yaml", 1, 1)


@pytest.mark.parametrize(
    "text",
    [
        "heat_template_version: 2013\n",  # value checked elsewhere: presence is enough here
        "AWSTemplateFormatVersion: '2010-09-09'\n",
        "HeatTemplateFormatVersion: '2012-12-12'\n",
        '{"heat_template_version": "2021-04-16"}',
    ],
)
def test_any_version_key_is_enough(text: str) -> None:
    assert len(load_template(text).data) == 1


def test_document_fields() -> None:
    doc = load_template(HOT, "web.yaml")
    assert isinstance(doc, Document)
    assert doc.name == "web.yaml" and doc.source.name == "web.yaml"
    assert load_template(HOT).name == "<template>"
    assert load_environment("{}").name == "<environment>"


# --- Error shapes (reference 8.2, 8.5) --------------------------------------------------


def test_yaml_syntax_error_shape() -> None:
    error = parse_error("resources:\n  a: b\n c: d\n")
    assert error.message.startswith("Error parsing template t.yaml ")
    assert error.message.endswith("in line 3, column 2")
    assert error.location == Location("t.yaml", 3, 2)
    assert error.http_status == 400


def test_percent_cannot_start_a_plain_scalar() -> None:
    error = parse_error("for_each: {%item%: [1, 2]}\n")
    assert "found character '%' that cannot start any token" in error.message
    assert error.location == Location("t.yaml", 1, 12)


def test_environment_errors_are_environment_parse_errors() -> None:
    with pytest.raises(EnvironmentParseError) as info:
        load_environment("parameters: [\n", "env.yaml")
    assert info.value.message.startswith("Error parsing environment env.yaml ")
    assert info.value.location is not None and info.value.location.file == "env.yaml"
    with pytest.raises(EnvironmentParseError, match="'!Ref'"):
        load_environment("a: !Ref b\n")


def test_tag_error_carries_the_data_path() -> None:
    error = parse_error("resources:\n  web:\n    properties:\n      list: [a, !Ref b]\n")
    assert error.path == ("resources", "web", "properties", "list", 1)
    assert error.location == Location("t.yaml", 4, 17)


# --- Limits and hostile input (reference 8.4) -------------------------------------------


def test_size_limit_message_and_boundary() -> None:
    text = "a: " + "x" * 97  # 100 characters
    assert load_document(text, max_size=100).data == {"a": "x" * 97}
    with pytest.raises(RequestLimitExceeded) as info:
        load_document(text + "x", max_size=100)
    assert info.value.message == (
        "Request limit exceeded: Template size (101 bytes) exceeds maximum allowed size "
        "(100 bytes)."
    )


def test_default_size_limit_is_checked_before_parsing() -> None:
    # Invalid YAML, but too big: the size error comes first.
    with pytest.raises(
        RequestLimitExceeded, match=r"Template size \(524289 bytes\).*\(524288 bytes\)"
    ):
        load_template("[" * 524289)


def test_size_counts_characters_for_bytes_too() -> None:
    text = "a: " + "é" * 97  # 100 characters, 197 bytes
    assert load_document(text.encode(), max_size=100).data == {"a": "é" * 97}
    with pytest.raises(RequestLimitExceeded, match="Template size"):
        load_document(b"a: " + b"x" * 1000, max_size=100)


def test_environment_size_message_names_the_environment() -> None:
    with pytest.raises(RequestLimitExceeded, match="Environment size"):
        load_document("a: bb", kind="environment", max_size=3)


def test_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    with pytest.raises(RequestLimitExceeded) as info:
        load_document("\n".join(lines))
    assert f"exceeds maximum allowed count ({MAX_NODES})" in info.value.message
    assert info.value.location is not None and info.value.location.line == 6
    assert info.value.path[0] == "a5"


def test_aliases_below_the_bound_load() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 4)]
    data = data_of("\n".join(lines))
    assert len(data["a3"]) == 10 and data["a3"][0] is data["a2"]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100000,
        "{a: " * 100000,
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        '{"a": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1),
        "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 1)) + "  " * (MAX_DEPTH + 1) + "v",
        "- " * 200000 + "x",
    ],
    ids=["flow-100000", "flow-map-100000", "json-list", "json-map", "block", "dashes"],
)
def test_nesting_deeper_than_max_depth_is_refused(text: str) -> None:
    with pytest.raises(RequestLimitExceeded, match=r"nesting depth exceeds maximum allowed depth"):
        load_document(text, "t.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "[" * MAX_DEPTH + "]" * MAX_DEPTH,
        '{"a": ' * MAX_DEPTH + "1" + "}" * MAX_DEPTH,
        "- " * MAX_DEPTH + "x",
    ],
)
def test_nesting_at_max_depth_loads(text: str) -> None:
    data = data_of(text)
    depth = 0
    while isinstance(data, list | dict) and data:
        data = data[0] if isinstance(data, list) else data["a"]
        depth += 1
    assert depth == MAX_DEPTH - (1 if text.startswith("[") else 0)


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("a: b\x00", 1, 5),
        ("a: 1\nb: '\x07'\n", 2, 5),
        ("a: \ud800\n", 1, 4),
        ("a: 1\nb: \ufffe\n", 2, 4),
    ],
)
def test_control_characters_and_surrogates(text: str, line: int, column: int) -> None:
    error = parse_error(text)
    assert "unacceptable character" in error.message
    assert error.location == Location("t.yaml", line, column)


def test_invalid_utf8_bytes() -> None:
    error = parse_error(b"a: 1\nb: \xff\xfe\n")
    assert "invalid UTF-8 byte 0xff" in error.message
    assert error.location == Location("t.yaml", 2, 4)


@pytest.mark.parametrize(
    "raw", [bytes(range(256)), b"\x00\x01\x02", b"\xc3", b"\x89PNG\r\n\x1a\n\x00\x00"]
)
def test_binary_garbage_is_a_parse_error(raw: bytes) -> None:
    with pytest.raises(TemplateParseError):
        load_document(raw)


def test_bytes_with_byte_order_mark() -> None:
    assert data_of(b"\xef\xbb\xbfa: 1\n") == {"a": 1}
    assert data_of(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert data_of('\ufeff{"a": 1}') == {"a": 1}


def test_huge_strings_within_the_limit_are_fine() -> None:
    assert data_of("a: " + "x" * 500000)["a"] == "x" * 500000
    assert data_of('{"a": "' + "y" * 500000 + '"}')["a"] == "y" * 500000


# --- Source positions -----------------------------------------------------------------

TEMPLATE = """\
heat_template_version: 2016-10-14
resources:
  web:
    type: OS::Nova::Server
    properties:
      image: cirros
      flavor: m1.small
      networks:
        - network: private
        - {port: {get_resource: p}}
base: &b {x: 1}
merged:
  <<: *b
  y: 2
alias: *b
"""


@pytest.mark.parametrize(
    ("path", "line", "column"),
    [
        ((), 1, 1),
        (("heat_template_version",), 1, 1),
        (("resources",), 2, 1),
        (("resources", "web"), 3, 3),
        (("resources", "web", "properties", "flavor"), 7, 7),
        (("resources", "web", "properties", "networks"), 8, 7),
        (("resources", "web", "properties", "networks", 0), 9, 11),
        (("resources", "web", "properties", "networks", 0, "network"), 9, 11),
        (("resources", "web", "properties", "networks", 1), 10, 11),
        (("resources", "web", "properties", "networks", 1, "port"), 10, 12),
        (("resources", "web", "properties", "networks", 1, "port", "get_resource"), 10, 19),
        # deepest known prefix
        (("resources", "web", "properties", "missing", "deeper"), 5, 5),
        (("resources", "web", "properties", "networks", 7), 8, 7),
        (("resources", "web", "properties", "networks", -1), 8, 7),
        (("resources", "web", "properties", "networks", "0"), 8, 7),
        (("nothing",), 1, 1),
        # merged keys point into the merged mapping; own keys at themselves
        (("merged", "x"), 11, 11),
        (("merged", "y"), 14, 3),
        (("alias",), 15, 1),
        (("alias", "x"), 11, 11),
    ],
)
def test_locate_yaml(path: tuple[str | int, ...], line: int, column: int) -> None:
    doc = load_template(TEMPLATE, "t.yaml")
    assert doc.source.locate(path) == Location("t.yaml", line, column)


def test_locate_json_is_computed_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [
        "{",
        '  "heat_template_version": "2016-10-14",',
        '  "resources": {',
        '    "web": {"properties": {"flavor": "m1", "list": [1, {"a": 2}]}}',
        "  }",
        "}",
    ]
    calls: list[str] = []

    def counting_scan(text: str) -> Any:
        calls.append(text)
        return json_marks(text)

    monkeypatch.setattr(loader, "json_marks", counting_scan)
    doc = load_template("\n".join(lines), "t.json")
    assert calls == []  # JSON needs no position scan until a position is asked for
    props = ("resources", "web", "properties")
    web = lines[3]
    assert doc.source.locate((*props, "flavor")) == Location("t.json", 4, web.index('"flavor"') + 1)
    assert doc.source.locate((*props, "list", 1)) == Location("t.json", 4, web.index('{"a"') + 1)
    assert doc.source.locate((*props, "list", 1, "a")) == Location(
        "t.json", 4, web.index('"a"') + 1
    )
    assert doc.source.locate(("resources",)) == Location("t.json", 3, 3)
    assert doc.source.locate(()) == Location("t.json", 1, 1)
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("text", "path", "target"),
    [
        # YAML limits implicit keys to 1024 characters and cannot read escaped surrogate
        # pairs; the JSON position scanner has neither limit.
        ('{"' + "k" * 2000 + '": [1, 2]}', ("k" * 2000, 1), "2"),
        ('{"\\ud83d\\ude00": "x", "b\\"q": [true, {"c": null}]}', ('b"q', 1, "c"), '"c"'),
        ('{"a": 1, "a": [2]}', ("a", 0), "2"),  # the duplicate that won
        ('{"a": 1, "a": [2]}', ("a",), '"a"'),
        ('[{"x": "y"}, NaN, -Infinity, "s"]', (3,), '"s"'),
        ('[{"x": "y"}, NaN, -Infinity, "s"]', (2,), "-Inf"),
    ],
)
def test_locate_json_without_yaml(text: str, path: tuple[str | int, ...], target: str) -> None:
    doc = load_document(text, "t.json")
    assert doc.source.locate(path) == Location("t.json", 1, text.rindex(target) + 1)


@pytest.mark.parametrize(
    "path",
    [("resources", ["unhashable"]), ("resources", None, 3.5), (object(),), ("a",) * 500],
)
def test_locate_never_raises(path: Any) -> None:
    doc = load_template(TEMPLATE)
    result = doc.source.locate(path)
    assert result is None or isinstance(result, Location)


def test_empty_source_map_knows_nothing() -> None:
    assert SourceMap.empty("x").locate(("a",)) is None
    assert SourceMap.empty("x").locate(()) is None
    assert load_document("").source.locate(("a",)) is None


def test_errors_can_be_located_through_the_source_map() -> None:
    doc = load_template(TEMPLATE, "t.yaml")
    error = KilnError("bad flavor", path=("resources", "web", "properties", "flavor"))
    error.locate(doc.source.locate)
    assert str(error.location) == "t.yaml:7:7"


# --- Speed ------------------------------------------------------------------------------


def make_template(resources: int = 1000) -> str:
    """A realistic template: each resource has 5 properties with nested lists and maps."""
    out = [HOT.rstrip(), "parameters:", "  f: {type: string, default: m1.small}", "resources:"]
    for i in range(resources):
        out += [
            f"  server{i}:",
            "    type: OS::Nova::Server",
            "    properties:",
            f"      name: s{i}",
            "      flavor: {get_param: f}",
            "      image: cirros",
            f"      networks: [{{port: {{get_resource: p{i}}}}}, {{network: net}}]",
            f"      metadata: {{index: {i}, on: yes, tags: [web]}}",
        ]
    return "\n".join(out) + "\n"


def test_loading_1000_resources() -> None:
    # Speed is measured by `make bench`, never asserted here.
    text = make_template()
    assert 150_000 < len(text) < 250_000
    doc = load_template(text, "big.yaml")
    assert len(doc.data["resources"]) == 1000
    assert doc.data["resources"]["server7"]["properties"]["metadata"][True] is True  # on: yes
    located = doc.source.locate(("resources", "server7", "properties", "flavor"))
    assert located == Location("big.yaml", 5 + 7 * 8 + 4, 7)
