"""Private oslo.config objects: the oslo libraries' options without the global ``cfg.CONF``."""

from __future__ import annotations

from oslo_config import cfg


def private_config() -> cfg.ConfigOpts:
    """An initialised ConfigOpts that reads no file and is not the global ``cfg.CONF``."""
    conf = cfg.ConfigOpts()
    conf([], project="kiln", default_config_files=[], default_config_dirs=[])
    return conf
