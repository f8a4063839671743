"""``kiln sandbox``: the simulated OpenStack cloud and its identity service, alone.

For an engine that runs elsewhere (``kiln engine`` pointed at it as at any cloud), or
for trying the OpenStack clients against a cloud that costs nothing: one port serves
Keystone v3 at ``/v3`` and Nova, Neutron, Cinder, Glance, Octavia and Aodh under
their prefixes, plus the ``/_sim`` controls. It writes the clouds.yaml entries
``kiln`` (admin) and ``kiln-demo``, as ``kiln all`` does.
"""

from __future__ import annotations

import logging
import os
import pathlib

import click
import sqlalchemy as sa

from kiln.cli import config
from kiln.cli.runtime import wait_for_stop
from kiln.cli.sandbox_site import Credentials, SandboxSite, load_sandbox_config, write_clouds
from kiln.cloud.sandbox.identity import CatalogEntry

DEFAULT_DATA_DIR = pathlib.Path(os.environ.get("KILN_SANDBOX_DIR", "~/.local/share/kiln/sandbox"))


@click.command("sandbox")
@click.option(
    "--config-file",
    "config_files",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True),
    help="heat.conf-style file whose [sandbox] section gives the defaults of these options.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=pathlib.Path),
    default=None,
    help="Where the cloud's state and credentials live [default: $KILN_SANDBOX_DIR or "
    "~/.local/share/kiln/sandbox].",
)
@click.option("--host", default=None, help="Address to listen on [default: 127.0.0.1].")
@click.option("--public-host", default=None, help="Host name written into URLs.")
@click.option("--port", type=int, default=None, help="Port [default: 5000].")
@click.option(
    "--sandbox-config",
    type=click.Path(dir_okay=False, exists=True, path_type=pathlib.Path),
    default=None,
    help="YAML file of the simulated cloud's latency, delays, faults and quotas.",
)
@click.option(
    "--orchestration-url",
    default=None,
    help="The orchestration API to list in the catalog (e.g. http://api:8004/v1/%(project_id)s).",
)
@click.option(
    "--clouds-yaml",
    type=click.Path(dir_okay=False, path_type=pathlib.Path),
    default=None,
    help="clouds.yaml to write the kiln entries into [default: ~/.config/openstack/clouds.yaml].",
)
def sandbox_command(
    config_files: tuple[str, ...],
    data_dir: pathlib.Path | None,
    host: str | None,
    public_host: str | None,
    port: int | None,
    sandbox_config: pathlib.Path | None,
    orchestration_url: str | None,
    clouds_yaml: pathlib.Path | None,
) -> None:
    """Run the simulated OpenStack cloud (identity and every service) on one port."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    section = config.load(list(config_files)).sandbox if config_files else None
    if section is not None:
        host = host or section.host
        port = port or section.port
        public_host = public_host or section.public_host
        data_dir = data_dir or pathlib.Path(section.data_dir)
        orchestration_url = orchestration_url or section.orchestration_url
        if sandbox_config is None and section.simulation_file:
            sandbox_config = pathlib.Path(section.simulation_file)
    host = host or "127.0.0.1"
    directory = (data_dir or DEFAULT_DATA_DIR).expanduser()
    directory.mkdir(parents=True, exist_ok=True)
    catalog = []
    if orchestration_url:
        catalog.append(CatalogEntry("orchestration", "heat", orchestration_url))
    site = SandboxSite(
        data_dir=directory,
        identity_db=sa.create_engine(f"sqlite:///{directory / 'identity.db'}"),
        credentials=Credentials.load_or_create(directory),
        host=host,
        port=port or 5000,
        advertised=public_host or host,
        config=load_sandbox_config(sandbox_config),
        extra_catalog=catalog,
    ).start()
    target = (clouds_yaml or pathlib.Path("~/.config/openstack/clouds.yaml")).expanduser()
    write_clouds(site.clouds(), target)
    click.echo(
        f"kiln sandbox: identity {site.url}/v3; clouds 'kiln' (admin) and 'kiln-demo' "
        f"written to {target}\n"
        "kiln sandbox: try  openstack --os-cloud kiln-demo server list\n"
        "kiln sandbox: ready",
        err=True,
    )
    wait_for_stop()
    click.echo("kiln sandbox: stopping", err=True)
    site.stop()
