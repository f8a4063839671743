"""The ``kiln`` command: the composition root that wires the packages together."""

from __future__ import annotations

import click

from kiln.cli.all_cmd import all_command
from kiln.cli.api_cmd import api_command
from kiln.cli.client.stack_cmds import COMMANDS
from kiln.cli.engine_cmd import engine_command
from kiln.cli.manage_cmd import manage_command
from kiln.cli.runtime import configure_process
from kiln.cli.sandbox_cmd import sandbox_command
from kiln.cli.template_cmd import template


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kiln")
def cli() -> None:
    """Kiln: an orchestration service compatible with OpenStack Heat."""


cli.add_command(template)
cli.add_command(all_command)
cli.add_command(sandbox_command)
cli.add_command(api_command)
cli.add_command(engine_command)
cli.add_command(manage_command)
for command in COMMANDS:
    cli.add_command(command)


def main() -> None:
    configure_process()
    cli()


if __name__ == "__main__":
    main()
