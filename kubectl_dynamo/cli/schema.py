"""``kubectl dynamo schema [NAME]``: the JSON Schema of a command's ``-o json`` output."""

from __future__ import annotations

import click

from kubectl_dynamo.cli.options import current_env, finish
from kubectl_dynamo.output.render import FORMATS, render


@click.command("schema")
@click.argument("name", required=False, metavar="[NAME]")
@click.option("-o", "--output", type=click.Choice(list(FORMATS)), default=None,
              help="Output format (default: json for a schema, table for the list).")
def schema_command(name, output):
    """Print the JSON Schema of a command's -o json output (without NAME: the list).

    \b
      kubectl dynamo schema                  # every schema and what prints it
      kubectl dynamo schema doctor > doctor.schema.json
      kubectl dynamo doctor -A -o json | check-jsonschema --schemafile doctor.schema.json -

    The schemas (JSON Schema draft 2020-12) are the contracts of docs/contracts.md: keys are
    added, never renamed or removed. Every command's findings follow `schema finding`.
    """
    from kubectl_dynamo.commands.schema import run_schema

    fmt = output or ("json" if name else "table")
    finish(render(run_schema(name), fmt, current_env()))


COMMANDS = [schema_command]
