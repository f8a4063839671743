"""Printing answers: rich tables for people, JSON or YAML for scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

FORMATS = click.Choice(["table", "json", "yaml"])
console = Console()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def show_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> None:
    if fmt != "table":
        show_value([{c: r.get(c) for c in columns} for r in rows], fmt)
        return
    table = Table(*columns, show_lines=False)
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    console.print(table)


def show_record(record: dict[str, Any], fmt: str) -> None:
    if fmt != "table":
        show_value(record, fmt)
        return
    table = Table("Field", "Value")
    for key, value in record.items():
        table.add_row(key, _cell(value) if not isinstance(value, str) else value)
    console.print(table)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, so rendered configs read as they are."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def show_value(value: Any, fmt: str) -> None:
    if fmt == "yaml":
        text = yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
        click.echo(text.rstrip())
    else:
        click.echo(json.dumps(value, indent=2))
