"""``kubectl dynamo upgrade dgd``: v1alpha1 -> v1beta1 without losing a field or a comment.

Input is ``-f FILE`` (multi-document; other kinds pass through untouched) or a live DGD by NAME.
Output is the manifest on stdout, a unified diff (``--diff``), or the file rewritten in place
(``--write``: the diff first on stderr, then FILE.bak and an atomic replace).
"""

from __future__ import annotations

import os
import shutil

import click

from ..errors import InputError, InvalidContent, NotFound, UsageError
from ..files import atomic_write
from ..output import grid, render, to_json
from .generate import DRY_RUN, KINDS, server_dry_run
from .options import kube_options


def _read_file(path: str) -> str:
    from ..manifests import read_text

    return read_text(path)


def _upgrade(text: str, uopts, source: str):
    from ..upgrade import UpgradeError, upgrade_text

    try:
        return upgrade_text(text, uopts)
    except UpgradeError as e:
        detail = "\n".join(f"{p.get('path')}: {p.get('message')}" for p in e.problems) or None
        raise InvalidContent(f"{source}: {e}", detail=detail) from None
    except Exception as e:  # ruamel/PyYAML parse errors name the line
        mark = getattr(e, "problem_mark", None)
        if mark is None:
            raise
        raise InputError(f"{source}: line {mark.line + 1}, column {mark.column + 1}: invalid YAML: "
                         f"{getattr(e, 'problem', None) or e}") from None


def _live(opts, name: str, uopts):
    """(text to upgrade, live object, note lines) for a DGD in the cluster."""
    from ..cluster.client import path_for
    from ..errors import DynamoError
    from ..output import to_yaml
    from ..upgrade import authored_version, manifest_from_live

    cluster = opts.cluster()
    ns = opts.target.namespace or cluster.namespace
    obj = None
    for version in ("v1beta1", "v1alpha1"):  # v1alpha1 only where an old CRD serves nothing else
        try:
            obj = cluster.get(path_for("nvidia.com", version, "dynamographdeployments", ns, name))
            break
        except NotFound:
            continue
    if obj is None:
        raise NotFound(f"dynamographdeployment {name!r} not found in namespace {ns!r}")
    authored = authored_version(obj)
    manifest = manifest_from_live(obj)
    if authored == "nvidia.com/v1alpha1" and manifest.get("apiVersion") != "nvidia.com/v1alpha1":
        # Written as v1alpha1 without a last-applied copy: ask the server for the v1alpha1 view
        # (needs the operator's conversion webhook).
        try:
            alpha = cluster.get(path_for("nvidia.com", "v1alpha1", "dynamographdeployments", ns, name))
            manifest = manifest_from_live(alpha)
        except DynamoError as e:
            if getattr(e, "status", None) is None and not isinstance(e, NotFound):
                raise
            click.echo(f"note: {name} was written as v1alpha1 but its v1alpha1 view is unavailable "
                       f"({e.message}); upgrading the stored v1beta1 object instead", err=True)
    manifest.setdefault("metadata", {}).setdefault("namespace", ns)
    return to_yaml(manifest), obj, authored, ns


def _origin_notes(obj, name: str, ns: str, uopts) -> None:
    from ..operator import versions
    from ..upgrade import TOPOLOGY_SINCE, origin_version, recreate_steps

    origin = origin_version(obj)
    if versions.at_least(origin, TOPOLOGY_SINCE):
        return
    click.echo(f"note: {name} was created by Dynamo operator {origin or '(unknown: no origin annotation)'}; the "
               f"origin version is immutable, so it keeps that behaviour after an operator upgrade "
               f"(no $(DYNAMO_RANK)/$(DYNAMO_LEADER_ADDRESS), no 1.6 topology).", err=True)
    if uopts.topology_aliases or uopts.role_templates:
        click.echo("To use the 1.6 topology variables, re-create it (this deletes the running pods: "
                   "expect downtime until the new pods are ready):", err=True)
        for i, step in enumerate(recreate_steps(name, ns), 1):
            click.echo(f"  {i}. {step}", err=True)


def _report_problems(result) -> None:
    for d in result.documents:
        for p in d.problems:
            click.echo(f"{p['severity']}: {d.kind}/{d.name}: {p['path']}: {p['message']}", err=True)
        for r in d.rewrites:
            if r.get("message"):
                click.echo(f"rewrite: {d.kind}/{d.name}: {r['path']}: {r['message']}", err=True)


@click.command("upgrade")
@click.argument("kind", metavar="dgd", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name", required=False)
@click.option("-f", "--filename", metavar="FILE", help="Manifest file (multi-document; '-' = stdin).")
@click.option("--write", is_flag=True, help="Rewrite FILE in place (after showing the diff on stderr); keeps FILE.bak.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff instead of the manifest.")
@click.option("--force", is_flag=True, help="Keep fields without a v1beta1 home in the nvidia.com/dgd-spec annotation "
              "(as the operator's conversion does) instead of failing.")
@click.option("--topology-aliases", is_flag=True, help="Replace GROVE_*/LWS_* leader and rank references with "
              "$(DYNAMO_LEADER_ADDRESS) / $(DYNAMO_RANK).")
@click.option("--role-templates", is_flag=True, help="Turn multinode components into 1.6 leader/worker templates.")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]), default=None,
              help="Provider for TRT-LLM role templates' worker addresses (default: from nvidia.com/enable-grove).")
@click.option("--operator-version", default=None, metavar="VERSION", help="Target operator version (default 1.6.0).")
@click.option("--dry-run", type=click.Choice(DRY_RUN), default="none", show_default=True,
              help="server: send every upgraded DGD to the cluster as a server-side dry run.")
@kube_options(all_namespaces=False, formats=("table", "json", "yaml"), default_format="yaml")
def upgrade_command(kind, name, filename, write, show_diff, force, topology_aliases, role_templates, orchestrator,
                    operator_version, dry_run, opts):
    """Upgrade DynamoGraphDeployments from nvidia.com/v1alpha1 to nvidia.com/v1beta1.

    \b
    Comments, key order and quoting are kept; documents that are not DGDs pass through
    byte for byte. A field without a v1beta1 home is an error naming its path (nothing is
    written) unless --force keeps it where the operator keeps round-trip data.

    \b
    Examples:
      kubectl dynamo upgrade dgd -f deploy.yaml > deploy.v1beta1.yaml
      kubectl dynamo upgrade dgd -f deploy.yaml --diff --topology-aliases
      kubectl dynamo upgrade dgd -f deploy.yaml --write --force
      kubectl dynamo upgrade dgd my-dgd -n dynamo

    \b
    Exit codes: 0 ok (also: already v1beta1), 1 a field cannot be converted or the server
    rejected the dry run, 2 usage or unreadable input, 3 cluster unreachable.
    """
    from ..operator import versions
    from ..upgrade import Options as UpgradeOptions
    from ..upgrade import unified_diff

    if bool(name) == bool(filename):
        raise UsageError("give either NAME (a live DGD) or -f FILE")
    if write and (not filename or filename == "-"):
        raise UsageError("--write needs -f FILE (a file to rewrite in place)")
    if write and show_diff:
        raise UsageError("--write already shows the diff (on stderr); drop --diff")
    operator_version = operator_version or versions.NEWEST
    if not versions.is_valid(operator_version):
        raise UsageError(f"--operator-version {operator_version!r} is not a version such as 1.6.0")
    uopts = UpgradeOptions(force=force, topology_aliases=topology_aliases, role_templates=role_templates,
                           orchestrator=orchestrator, operator_version=operator_version)

    if filename:
        source = "<stdin>" if filename == "-" else filename
        text = _read_file(filename)
        result = _upgrade(text, uopts, source)
        display = os.path.basename(filename) if filename != "-" else "stdin"
    else:
        text, obj, authored, ns = _live(opts, name, uopts)
        _origin_notes(obj, name, ns, uopts)
        if authored == "nvidia.com/v1beta1" and not (topology_aliases or role_templates):
            click.echo(f"dynamographdeployment {ns}/{name} is already nvidia.com/v1beta1; nothing to upgrade", err=True)
            return 0
        result = _upgrade(text, uopts, f"{ns}/{name}")
        display = f"{name}.yaml"

    _report_problems(result)
    if dry_run == "server":
        for d, data in zip(result.documents, result.data):
            if d.kind == "DynamoGraphDeployment" and d.to_version == "nvidia.com/v1beta1":
                where = server_dry_run(opts, data)
                click.echo(f"server dry run: accepted nvidia.com/v1beta1 dynamographdeployment {where}", err=True)

    if write:
        if not result.changed:
            click.echo(f"{filename}: nothing to change", err=True)
            return 0
        backup = filename + ".bak"
        if os.path.exists(backup):
            raise InputError(f"{backup} exists; move it away first (it may be an earlier backup)")
        click.echo(unified_diff(result.original, result.text, display), err=True, nl=False)
        try:
            shutil.copy2(filename, backup)
        except OSError as e:
            raise InputError(f"{backup}: cannot write backup: {e.strerror}") from None
        atomic_write(filename, result.text)
        click.echo(f"wrote {filename} (backup {backup})", err=True)
        return 0
    if show_diff:
        click.echo(unified_diff(result.original, result.text, display), nl=False)
        return 0
    if opts.output == "yaml":
        click.echo(result.text, nl=False)
    elif opts.output == "json":
        import json

        items = [json.loads(json.dumps(d, default=str)) for d in result.data]
        click.echo(to_json(items[0] if len(items) == 1 else {"apiVersion": "v1", "kind": "List", "items": items}))
    else:
        render({"documents": [d.as_dict() for d in result.documents]}, "table", format_report)
    return 0


def format_report(result: dict, wide: bool, color: bool) -> str:
    rows = [[d["index"] + 1, d["kind"], d["name"], d["from"], d["to"], "yes" if d["changed"] else "no",
             sum(p["severity"] == "warning" for p in d["problems"]), sum(not r.get("note") for r in d["rewrites"])]
            for d in result["documents"]]
    return grid(rows, ["doc", "kind", "name", "from", "to", "changed", "warnings", "rewrites"])


COMMANDS = [upgrade_command]
