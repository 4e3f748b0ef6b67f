"""Shell completion through kubectl's plugin completion protocol.

kubectl (>= 1.26) completes ``kubectl dynamo <TAB>`` by running ``kubectl_complete-dynamo`` from
PATH with the words typed after the plugin name, the last being the partial word. It reads one
candidate per line (``value<TAB>description``) and an optional final ``:<directive>`` line
(cobra's ShellCompDirective; 4 = no file completion). krew does not install that executable, so
``completion`` prints or writes it.

What is completed: commands and flags (Click), DGD names and namespaces (read from the cluster with
a short timeout; nothing when it cannot be read, never an error), kubeconfig contexts, check codes.
"""

from __future__ import annotations

import os
import stat

import click

from kubectl_dynamo.environment import Environment
from kubectl_dynamo.output.render import render
from kubectl_dynamo.result import Result

SHIM_NAME = "kubectl_complete-dynamo"
SHIM = """#!/bin/sh
# kubectl_complete-dynamo: answers kubectl's plugin completion for `kubectl dynamo`.
exec kubectl-dynamo __complete "$@"
"""
NO_FILE_COMP = 4
COMPLETION_TIMEOUT = "2s"  # a <TAB> must not hang on an unreachable cluster


def _quietly(read) -> list:
    """Candidates from ``read()``, or none at all when anything goes wrong (no kubeconfig, no
    cluster, forbidden, timeout): completion never prints an error into the user's shell."""
    try:
        return list(read())
    except Exception:
        return []


def _cluster(ctx: click.Context):
    from kubectl_dynamo.cluster.client import Target

    p = ctx.params
    target = Target(p.get("kubeconfig"), p.get("context"), p.get("namespace"), COMPLETION_TIMEOUT)
    env = ctx.find_object(Environment) or Environment.from_process()
    return env.cluster_factory(target)


def _names(items: list, incomplete: str) -> list:
    return sorted(n for n in {(o.get("metadata") or {}).get("name") for o in items} if n and n.startswith(incomplete))


def complete_dgd(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """DynamoGraphDeployment names in -n's namespace (the context's), or in all with -A."""
    from kubectl_dynamo.cluster import kinds

    def read():
        cluster = _cluster(ctx)
        ns = None if ctx.params.get("all_namespaces_flag") else cluster.namespace
        return _names(cluster.list(kinds.DGD.path(ns)), incomplete)

    return _quietly(read)


def complete_get_args(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """``get [dgd] [NAME]``: the resource first, then names."""
    if not ctx.params.get("args") and "dgd".startswith(incomplete):
        return ["dgd"] + complete_dgd(ctx, param, incomplete)
    return complete_dgd(ctx, param, incomplete)


def complete_namespace(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    from kubectl_dynamo.cluster.client import path_for

    return _quietly(lambda: _names(_cluster(ctx).list(path_for("", "v1", "namespaces")), incomplete))


def complete_context(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """The contexts of the kubeconfig files (--kubeconfig, $KUBECONFIG, ~/.kube/config); no cluster."""
    from kubectl_dynamo.cluster.client import Target, kubeconfig_paths
    from kubectl_dynamo.inputs.manifests import load_mapping

    def read():
        names: set = set()
        for path in kubeconfig_paths(Target(ctx.params.get("kubeconfig"))):
            if os.path.isfile(path):
                contexts = load_mapping(path, "kubeconfig").get("contexts") or []
                names |= {c["name"] for c in contexts if isinstance(c, dict) and isinstance(c.get("name"), str)}
        return sorted(n for n in names if n.startswith(incomplete))

    return _quietly(read)


def complete_codes(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Check codes; after a comma (``--only a,b``) the next code of the list."""
    from kubectl_dynamo.findings.catalogue import ENTRIES

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    return [prefix + e.code for e in ENTRIES if e.code.startswith(last)]


@click.command("completion")
@click.option("--install", "install_dir", metavar="DIR", type=click.Path(file_okay=False),
              help=f"Write {SHIM_NAME} into DIR (a directory on PATH) instead of printing it.")
@click.option("--k9s", "k9s", is_flag=True, help="Print the k9s plugins (tree, doctor, logs by rank, rollout status on "
              "a DGD; doctor, tree and logs of a pod's DGD) for k9s's plugins.yaml instead (docs/k9s.md).")
def completion_command(install_dir, k9s):
    """Print (or --install) the kubectl_complete-dynamo helper for `kubectl dynamo <TAB>`.

    \b
    Example (krew users: krew does not install this helper):
      kubectl dynamo completion --install ~/.krew/bin
      kubectl dynamo completion --k9s          # the k9s plugins, for k9s's plugins.yaml
    """
    if k9s:
        if install_dir:
            from kubectl_dynamo.errors import UsageError

            raise UsageError("--k9s prints the plugins: merge them into k9s's plugins.yaml (docs/k9s.md)")
        from kubectl_dynamo.data import DATA_DIR

        with open(os.path.join(DATA_DIR, "k9s", "plugins.yaml"), encoding="utf-8") as f:
            _print(f.read())
        return
    if not install_dir:
        _print(SHIM)
        return
    os.makedirs(install_dir, exist_ok=True)
    path = os.path.join(install_dir, SHIM_NAME)
    with open(path, "w") as f:
        f.write(SHIM)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    _print(f"wrote {path}\n")


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
    _print("".join(line + "\n" for line in lines))


def _print(text: str) -> None:
    """Through the one renderer, verbatim (the protocol's lines, the shim), on the command's Environment."""
    ctx = click.get_current_context(silent=True)
    env = (ctx.find_object(Environment) if ctx else None) or Environment.from_process()
    render(Result(None, text=text, verbatim=True), "table", env)


COMMANDS = [completion_command, complete_command]
