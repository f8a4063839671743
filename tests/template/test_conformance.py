"""Every conformance case of template-language.md section 9, read from the reference.

The cases are parsed out of the reference itself, so a case added there is a
test here. Modes: validate (expect success or an error kind and substring),
create (build, "create" every resource offline, read outputs) and provider
(inspect the interface derived for template resource ``n``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from kiln.core.errors import KilnError, ValidationFailed
from kiln.template.inputs import build_stack
from kiln.template.stack import StackDefinition
from kiln.testing.heat_types import HEAT_TEST_TYPES, CreatedState
from tests_support import SHARED

REFERENCE = SHARED / "reference" / "template-language.md"


def _cases() -> list[dict[str, Any]]:
    text = REFERENCE.read_text()
    start = text.index("## 9. Conformance test cases")
    end = text.index("## Appendix A")
    cases: list[dict[str, Any]] = []
    for block in re.findall(r"```yaml\n(.*?)```", text[start:end], re.S):
        cases.extend(yaml.safe_load(block))
    return cases


CASES = _cases()


def test_every_case_is_collected() -> None:
    assert len(CASES) >= 70
    assert len({c["id"] for c in CASES}) == len(CASES)


def _build(case: dict[str, Any]) -> tuple[StackDefinition | None, list[KilnError]]:
    try:
        stack = build_stack(
            case["template"],
            environment=case.get("env"),
            files=case.get("files"),
            types=HEAT_TEST_TYPES,
            check_values=True,
        )
    except ValidationFailed as exc:
        return None, exc.errors
    except KilnError as exc:
        return None, [exc]
    return stack, stack.errors


def _show(errors: list[KilnError]) -> str:
    return "\n".join(f"{e.kind}: {e.full_message}" for e in errors)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    expect = case["expect"]
    stack, errors = _build(case)
    if "error" in expect:
        wanted = expect["message_contains"]
        assert any(e.kind == expect["error"] and wanted in e.full_message for e in errors), (
            f"expected {expect['error']}: {wanted!r}; got:\n{_show(errors)}"
        )
        return
    assert not errors, _show(errors)
    assert stack is not None
    if "implementation" in expect:
        got = {name: stack.typed[name].implementation for name in expect["implementation"]}
        assert got == expect["implementation"]
    if case["mode"] == "provider":
        _check_provider(stack, expect)
        return
    if case["mode"] != "create":
        return
    CreatedState().create_all(stack)
    if "enabled_resources" in expect:
        assert sorted(stack.resources) == sorted(expect["enabled_resources"])
    outputs = stack.output_values()
    for key, value in expect.get("outputs", {}).items():
        out = outputs[key]
        assert out.error is None, out.error
        assert out.value == value
    for key, fragment in expect.get("output_errors_contain", {}).items():
        assert outputs[key].error is not None and fragment in outputs[key].error


def _check_provider(stack: StackDefinition, expect: dict[str, Any]) -> None:
    provider: Any = stack.typed["n"]
    props = {
        name: {"type": str(schema.type), "required": schema.required}
        for name, schema in provider.property_schemas.items()
    }
    assert props == expect["facade_properties"]
    for attr in expect["facade_attributes_include"]:
        assert attr in provider.attribute_names
    assert provider.nested_parameters == expect["nested_parameters"]
