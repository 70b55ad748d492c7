"""`lakeload config show`: every setting of a destination, its value (secrets masked) and its source.

    lakeload config show
    lakeload config show --pipeline quick_start --destination production_bucket
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(commands: Any) -> None:
    """Add the `config` command (with its `show` subcommand) to the top-level subparsers."""
    config = commands.add_parser(
        "config",
        help="inspect configuration: lakeload config show",
        description="Inspect lakeload's configuration (env vars, .lakeload/*.toml, ~/.lakeload/*.toml).",
    )
    actions = config.add_subparsers(dest="config_command", metavar="{show}", required=True)
    show = actions.add_parser(
        "show",
        help="print every setting of a destination with its value and source",
        description=(
            "Resolve every setting of the filesystem destination (bucket_url, layout, kwargs, client_kwargs, "
            "deltalake_storage_options, max_state_files, always_refresh_views, credentials) and a few runtime settings, and print "
            "'key = value  (source)' per line, secrets masked, then every sources.* value set (source and resource "
            "arguments), then the keys set but not read by lakeload "
            "(unused: typos, with the closest known key) and the TOML files read. Does not start Spark."
        ),
    )
    show.add_argument("--pipeline", default=None, metavar="NAME",
                      help="pipeline name, for <PIPELINE>__... scoped keys (default: none)")
    show.add_argument("--destination", default="filesystem", metavar="NAME",
                      help="destination name, i.e. the [destination.<NAME>] section (default: %(default)s)")
    config.set_defaults(handler=run_config_show)


def run_config_show(args: argparse.Namespace) -> int:
    """Print the resolved configuration; returns the exit code (1 when a configuration file cannot be read)."""
    from lakeload.errors import ConfigFileError
    from lakeload.runtime.config_report import render_configuration, show_configuration

    try:
        print(render_configuration(show_configuration(args.pipeline, args.destination)))
    except ConfigFileError as exc:
        print(f"lakeload config show: {exc}", file=sys.stderr)
        return 1
    return 0
