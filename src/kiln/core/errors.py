"""Every error Kiln reports, as one tree.

Each error knows *what* went wrong (``message``), *where* in the template
(``path``, rendered ``resources.web.properties.flavor``) and, when the input
was a file, *where in the file* (``location``, ``file:line:col``). ``kind`` is
the name of Heat's exception class for the same failure, so that the API can
return Heat's error body unchanged.

    KilnError                              kind = class name, http_status 500
    ├── UserError                          bad input; http_status 400
    │   ├── TemplateParseError             "Template not in valid format" (YAML/JSON text)
    │   ├── EnvironmentParseError          "Environment not in valid format"
    │   ├── StackValidationFailed
    │   ├── InvalidTemplateVersion
    │   ├── InvalidTemplateSection
    │   ├── InvalidTemplateReference
    │   ├── InvalidTemplateAttribute
    │   ├── InvalidSchemaError
    │   ├── UnknownUserParameter
    │   ├── UserParameterMissing
    │   ├── RequestLimitExceeded
    │   ├── CircularDependencyException
    │   ├── ImmutableParameterModified
    │   ├── InvalidBreakPointHook
    │   ├── InvalidRestrictedAction
    │   ├── InvalidExternalResourceDependency
    │   ├── ConflictingMergeStrategyForParam
    │   ├── InvalidMergeStrategyForParam
    │   ├── NotSupported
    │   └── ValidationFailed               several independent errors found in one pass
    ├── ActionInProgress                   another action runs on the stack; http_status 409
    └── InternalError                      a bug; http_status 500

Imports: stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from kiln.core.paths import Location, Path, PathSegment, render_path


class KilnError(Exception):
    """Base of every error Kiln raises on purpose."""

    http_status: ClassVar[int] = 500

    def __init__(
        self,
        message: str,
        *,
        path: Path = (),
        location: Location | None = None,
        category: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path: Path = tuple(path)
        self.location = location
        self.category = category

    @property
    def kind(self) -> str:
        """Heat's exception class name for this failure."""
        return type(self).__name__

    def within(self, *segments: PathSegment) -> KilnError:
        """Prefix the path with the segments of an enclosing element; returns self."""
        self.path = tuple(segments) + self.path
        return self

    def with_category(self, category: str) -> KilnError:
        """Set the category label ("Property error", ...) unless one is set; returns self."""
        if self.category is None:
            self.category = category
        return self

    def locate(self, finder: Callable[[Path], Location | None]) -> KilnError:
        """Fill in ``location`` from the path when it is not known yet; returns self."""
        if self.location is None and self.path:
            self.location = finder(self.path)
        return self

    @property
    def full_message(self) -> str:
        """``[category: ][path: ]message``, as Heat renders validation errors."""
        parts = []
        if self.category:
            parts.append(self.category)
        if self.path:
            parts.append(render_path(self.path))
        parts.append(self.message)
        return ": ".join(parts)

    def __str__(self) -> str:
        return self.full_message

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready description, used by ``--format json`` and the API."""
        return {
            "type": self.kind,
            "message": self.full_message,
            "path": render_path(self.path) if self.path else None,
            "location": str(self.location) if self.location else None,
        }


class UserError(KilnError):
    """The input is wrong; the caller can fix it."""

    http_status = 400


class TemplateParseError(UserError):
    """The template text is not YAML or JSON, or not a mapping."""


class EnvironmentParseError(UserError):
    """The environment text is not a valid environment document."""


class StackValidationFailed(UserError):
    """A template, environment or parameter value failed validation."""


class InvalidTemplateVersion(UserError):
    """The version key is missing, ambiguous or unknown, or a function was removed."""


class InvalidTemplateSection(UserError):
    """A top-level section is not allowed in this template version."""


class InvalidTemplateReference(UserError):
    """A reference names a resource that does not exist (or is disabled)."""


class InvalidTemplateAttribute(UserError):
    """``get_attr`` names an attribute the resource type does not have."""


class InvalidSchemaError(UserError):
    """A parameter declaration or constraint is malformed, or its default invalid."""


class UnknownUserParameter(UserError):
    """A value was given for a parameter the template does not declare."""


class UserParameterMissing(UserError):
    """A parameter has no value, no environment default and no template default."""


class RequestLimitExceeded(UserError):
    """A configured limit (size, count, depth) was exceeded."""


class CircularDependencyException(UserError):
    """The resources depend on each other in a cycle."""


class ImmutableParameterModified(UserError):
    """An update changes a parameter declared immutable."""


class InvalidBreakPointHook(UserError):
    """An environment names a hook type that does not exist."""


class InvalidRestrictedAction(UserError):
    """An environment names a restricted action that does not exist."""


class InvalidExternalResourceDependency(UserError):
    """A resource with ``external_id`` declares ``depends_on``."""


class ConflictingMergeStrategyForParam(UserError):
    """Two environment files ask for different merge strategies for one parameter."""


class InvalidMergeStrategyForParam(UserError):
    """A merge strategy cannot apply to the parameter's type."""


class NotSupported(UserError):
    """The request is understood but not supported."""


class ActionInProgress(KilnError):
    """Another action is running on the stack."""

    http_status = 409


class InternalError(KilnError):
    """Something Kiln did not expect: a bug, never the user's fault."""


class ValidationFailed(UserError):
    """Several independent problems, all found in one pass."""

    def __init__(self, errors: Sequence[KilnError]) -> None:
        self.errors: list[KilnError] = list(errors)
        if not self.errors:
            raise ValueError("ValidationFailed needs at least one error")
        first = self.errors[0]
        super().__init__(
            "\n".join(e.full_message for e in self.errors),
            location=first.location,
        )

    @property
    def kind(self) -> str:
        return self.errors[0].kind

    @property
    def full_message(self) -> str:
        return "\n".join(e.full_message for e in self.errors)

    def to_dict(self) -> dict[str, object]:
        return {
            "type": self.kind,
            "message": self.full_message,
            "errors": [e.to_dict() for e in self.errors],
        }


def raise_all(errors: Iterable[KilnError]) -> None:
    """Raise the one error, or a ValidationFailed holding several; nothing if empty."""
    found = list(errors)
    if len(found) == 1:
        raise found[0]
    if found:
        raise ValidationFailed(found)
