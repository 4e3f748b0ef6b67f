"""Shell completion through kubectl's plugin completion protocol.

kubectl (>= 1.26) completes ``kubectl dynamo <TAB>`` by running ``kubectl_complete-dynamo`` from
PATH with the words typed after the plugin name, the last being the partial word. It reads one
candidate per line (``value<TAB>description``) and an optional final ``:<directive>`` line
(cobra's ShellCompDirective; 4 = no file completion). krew does not install that executable, so
``completion`` prints or writes it.
"""

from __future__ import annotations

import os
import stat

import click

from kubectl_dynamo.cli.options import current_env, finish
from kubectl_dynamo.output.render import render
from kubectl_dynamo.result import Result

SHIM_NAME = "kubectl_complete-dynamo"
SHIM = """#!/bin/sh
# kubectl_complete-dynamo: answers kubectl's plugin completion for `kubectl dynamo`.
exec kubectl-dynamo __complete "$@"
"""
NO_FILE_COMP = 4


@click.command("completion")
@click.option("--install", "install_dir", metavar="DIR", type=click.Path(file_okay=False),
              help=f"Write {SHIM_NAME} into DIR (a directory on PATH) instead of printing it.")
def completion_command(install_dir):
    """Print (or --install) the kubectl_complete-dynamo helper for `kubectl dynamo <TAB>`.

    \b
    Example (krew users: krew does not install this helper):
      kubectl dynamo completion --install ~/.krew/bin
    """
    if not install_dir:
        finish(render(Result(None, text=SHIM, verbatim=True), "table", current_env()))
        return
    os.makedirs(install_dir, exist_ok=True)
    path = os.path.join(install_dir, SHIM_NAME)
    with open(path, "w") as f:
        f.write(SHIM)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    finish(render(Result(None, text=f"wrote {path}\n", verbatim=True), "table", current_env()))


@click.command("__complete", hidden=True,
               context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                 "help_option_names": []})
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def complete_command(words):
    """Answer one completion request (the protocol described in the module docstring)."""
    from click.shell_completion import ShellComplete

    from kubectl_dynamo.cli import cli

    words = list(words) or [""]
    sc = ShellComplete(cli, {}, "kubectl-dynamo", "_KUBECTL_DYNAMO_COMPLETE")
    directive = NO_FILE_COMP
    lines = []
    for item in sc.get_completions(words[:-1], words[-1]):
        if item.type in ("file", "dir"):
            directive = 0
            continue
        lines.append(f"{item.value}\t{item.help}" if item.help else item.value)
    lines.append(f":{directive}")
    finish(render(Result(None, text="".join(line + "\n" for line in lines), verbatim=True), "table", current_env()))


COMMANDS = [completion_command, complete_command]
