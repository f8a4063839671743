"""The ``kiln`` command: the composition root that wires the packages together."""

from __future__ import annotations

import click

from kiln.cli.runtime import configure_process
from kiln.cli.template_cmd import template


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kiln")
def cli() -> None:
    """Kiln: an orchestration service compatible with OpenStack Heat."""


cli.add_command(template)


def main() -> None:
    configure_process()
    cli()


if __name__ == "__main__":
    main()
