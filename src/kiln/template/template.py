"""A loaded template: its version, its sections, and where each part came from.

``Template`` checks the top level (version key, allowed sections) and gives the
sections under canonical (HOT) names whatever the format, so the rest of the
package need not care whether the input was HOT or CFN.
Imports: kiln.core, kiln.template (loader, versions).
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from kiln.core.errors import (
    InvalidTemplateSection,
    KilnError,
    RequestLimitExceeded,
    StackValidationFailed,
    TemplateParseError,
)
from kiln.core.paths import Location, Path
from kiln.template.loader import MAX_DEPTH, Document, SourceMap, depth_ok, load_template
from kiln.template.versions import TemplateVersion, detect_version

MAX_TEMPLATE_SIZE = 524288

# Canonical section name -> CFN spelling.
_CFN_SECTIONS = {
    "description": "Description",
    "parameters": "Parameters",
    "resources": "Resources",
    "outputs": "Outputs",
    "conditions": "Conditions",
    "mappings": "Mappings",
}


_PARSED_SIZE = 128
_parsed: OrderedDict[tuple[str | bytes, str, int], Template] = OrderedDict()
_parsed_lock = threading.Lock()


@dataclass
class Template:
    """A template document with its version."""

    data: dict[str, Any]
    version: TemplateVersion
    name: str = "<template>"
    source: SourceMap = field(default_factory=lambda: SourceMap.empty("<template>"))

    @classmethod
    def load(
        cls, text: str | bytes, name: str = "<template>", *, max_size: int | None = None
    ) -> Template:
        """Parse template text (JSON or YAML) and check its top level.

        The same text is parsed once: a group of N members names one nested template N
        times, and parsing with line marks costs far more than copying the result.
        """
        limit = MAX_TEMPLATE_SIZE if max_size is None else max_size
        key = (text, name, limit)
        with _parsed_lock:
            parsed = _parsed.get(key)
            if parsed is not None:
                _parsed.move_to_end(key)
        if parsed is None:
            parsed = cls.from_document(load_template(text, name, max_size=limit))
            with _parsed_lock:
                _parsed[key] = parsed
                while len(_parsed) > _PARSED_SIZE:
                    _parsed.popitem(last=False)
        # callers may change the data they get; the source map is read-only
        return replace(parsed, data=copy.deepcopy(parsed.data))

    @classmethod
    def from_document(cls, doc: Document) -> Template:
        data = doc.data
        try:
            version = detect_version(data)
        except KilnError as err:
            err.locate(doc.source.locate)
            raise
        template = cls(data=data, version=version, name=doc.name, source=doc.source)
        template.check_sections()
        return template

    @classmethod
    def from_data(
        cls, data: Any, name: str = "<template>", *, max_size: int | None = None
    ) -> Template:
        """A template given as structured data (as in an API request body)."""
        if not isinstance(data, dict):
            raise TemplateParseError("The template is not a JSON object or YAML mapping.")
        limit = MAX_TEMPLATE_SIZE if max_size is None else max_size
        size = json_size(data, f"Template {name}")
        if size > limit:
            raise RequestLimitExceeded(
                f"Request limit exceeded: Template size ({size} bytes) exceeds maximum "
                f"allowed size ({limit} bytes)."
            )
        return cls.from_document(Document(data=data, source=SourceMap.empty(name), name=name))

    # -- structure ------------------------------------------------------------
    def check_sections(self) -> None:
        allowed = set(self.version.sections)
        for key in self.data:
            if key not in allowed:
                raise InvalidTemplateSection(
                    f"The template section is invalid: {key}",
                    location=self.source.locate((key,)) if isinstance(key, str) else None,
                )

    def section_key(self, canonical: str) -> str:
        """The key this template uses for a section (``resources`` or ``Resources``)."""
        return _CFN_SECTIONS.get(canonical, canonical) if self.version.is_cfn else canonical

    def section(self, canonical: str) -> Any:
        """A section's raw value; None when absent or null."""
        return self.data.get(self.section_key(canonical))

    def mapping_section(self, canonical: str) -> tuple[dict[str, Any], list[KilnError]]:
        """A section that must be a mapping: (its entries, errors)."""
        value = self.section(canonical)
        if value is None:
            return {}, []
        if not isinstance(value, dict):
            key = self.section_key(canonical)
            return {}, [
                StackValidationFailed(
                    f'"{key}" must contain a map of {_ENTRY_NAMES.get(canonical, "entries")}. '
                    f"Found a [{type(value).__name__}] instead",
                    path=(key,),
                )
            ]
        return value, []

    @property
    def description(self) -> str:
        value = self.section("description")
        return value if isinstance(value, str) else ""

    def locate(self, path: Path) -> Location | None:
        return self.source.locate(path)


def json_size(data: Any, what: str, invalid: type[KilnError] = TemplateParseError) -> int:
    """The length of the JSON text of data given as data (as in a request body).

    Data must be what JSON text can hold, within the bounds the loader applies to
    text: containers nested deeper than the loader's MAX_DEPTH (a cycle counts as
    too deep) raise RequestLimitExceeded, and an integer too long to write as
    decimal text (Python's ``int_max_str_digits``) raises ``invalid``. ``what``
    names the data in messages ("Template t.yaml").
    """
    if not depth_ok(data):
        raise RequestLimitExceeded(
            f"Request limit exceeded: {what}: nesting depth exceeds maximum allowed depth "
            f"({MAX_DEPTH})."
        )
    try:
        return len(json.dumps(data, default=str))
    except ValueError as exc:
        raise invalid(f"{what} is not valid JSON data: {exc}") from None


_ENTRY_NAMES = {
    "resources": "resource maps",
    "outputs": "output maps",
    "parameters": "parameter maps",
    "conditions": "conditions",
    "mappings": "mappings",
}
