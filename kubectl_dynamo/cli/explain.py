"""``kubectl dynamo explain dgd``: what the operator renders, offline or live, and field docs."""

from __future__ import annotations

import shlex
import textwrap

import click

from ..errors import ExitCode, InputError, UsageError
from ..output import grid, paint, render
from .options import finish, kube_options


@click.command("explain")
@click.argument("target", metavar="dgd[.FIELD.PATH]")
@click.argument("name", required=False)
@click.option("-f", "--filename", metavar="FILE", help="Manifest to explain offline ('-' reads stdin).")
@click.option("--orchestrator", type=click.Choice(["grove", "lws"]),
              help="Offline: assume this orchestrator (default: Grove unless the DGD sets "
                   'nvidia.com/enable-grove: "false", then LWS).')
@click.option("--operator-version", metavar="X.Y.Z",
              help="The operator that creates the DGD (default: the cluster's when live, else the newest modelled).")
@click.option("--recursive", is_flag=True, help="Field docs: list the whole subtree.")
@click.option("--api-version", "api_version", type=click.Choice(["v1beta1", "v1alpha1"]), default="v1beta1",
              show_default=True, help="Field docs: the DGD API version to document.")
@click.option("--cluster-schema", is_flag=True, help="Field docs: read the CRD from the cluster instead of the bundled one.")
@kube_options(all_namespaces=False)
def explain_command(target, name, filename, orchestrator, operator_version, recursive, api_version,
                    cluster_schema, opts):
    """Show exactly what the Dynamo operator renders for a DynamoGraphDeployment.

    \b
      kubectl dynamo explain dgd -f deploy.yaml           # offline, every DGD in the file
      kubectl dynamo explain dgd my-dgd -n dynamo          # a live DGD with the cluster's gates
      kubectl dynamo explain dgd.spec.components.multinode # field documentation
      kubectl dynamo explain dgd.spec --recursive

    Exit 1 when a finding is an error (the operator would fail or mis-render), 2 for
    unreadable input, 3 when the cluster is unreachable.
    """
    from .. import explain as core
    from ..manifests import load

    resource, _, path = target.partition(".")
    if resource.lower() not in core.DGD_NAMES and target.lower() not in core.DGD_NAMES:
        raise UsageError(f'unknown resource "{resource}": only dgd (dynamographdeployments.nvidia.com) is explained')
    if path and target.lower() not in core.DGD_NAMES:
        openapi = _cluster_openapi(opts, api_version) if cluster_schema else None
        result = core.field_docs(path.split("."), api_version, recursive, openapi=openapi)
        render(result, opts.output, format_field_docs)
        return

    if filename and name:
        raise UsageError("give either NAME (a live DGD) or -f FILE, not both")
    if filename:
        docs = load(filename)
        result = core.explain_documents(docs, orchestrator=orchestrator, operator_version=operator_version)
        if not result["items"]:
            raise InputError(f"{filename}: no DynamoGraphDeployment found")
    elif name:
        result = {"items": [_explain_live(opts, name, orchestrator, operator_version)], "skipped": []}
    else:
        raise UsageError("explain dgd needs NAME (a live DGD) or -f FILE, or a field path such as dgd.spec")

    payload = result["items"][0] if len(result["items"]) == 1 and not result["skipped"] else result
    render(payload, opts.output, lambda r, wide, color: format_results(result, wide, color))
    finish(ExitCode.FINDINGS if core.has_errors(result["items"]) else ExitCode.OK)


def _explain_live(opts, name, orchestrator, operator_version):
    from .. import explain as core
    from ..cluster.live import explain_context, get_dgd

    cluster = opts.cluster()
    doc = get_dgd(cluster, name)
    context = explain_context(cluster)
    result = core.explain_one(doc, orchestrator=orchestrator, operator_version=operator_version, context=context)
    for note in context.notes:
        result["findings"].append({"code": "permission-denied", "severity": "warning", "component": None,
                                   "message": note, "hint": "grant read access (see docs/rbac/)"})
    return result


def _cluster_openapi(opts, version):
    from ..cluster.client import path_for

    crd = opts.cluster().get(path_for("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                      name="dynamographdeployments.nvidia.com"))
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    raise UsageError(f"the cluster's DGD CRD does not serve {version}")


# -- human output --------------------------------------------------------------------------------
WIDTH = 110


def format_results(result: dict, wide: bool, color: bool) -> str:
    out = []
    for r in result["items"]:
        out.append(format_one(r, wide, color))
    for s in result["skipped"]:
        out.append(f"skipped document {s['document']} ({s['kind'] or 'no kind'}): {s['reason']}")
    return "\n\n".join(out)


def format_one(r: dict, wide: bool, color: bool) -> str:
    ns = f" -n {r['namespace']}" if r["namespace"] else ""
    out = [f"DynamoGraphDeployment {r['name']}{ns}  ({r['apiVersion']})",
           f"  operator {r['operatorVersion']}, origin {r['originVersion'] or 'none'}; provider {r['provider']}, "
           f"orchestrator {r['orchestrator'] or 'none'}, scheduler {r['scheduler'] or 'default'}"
           + (f", queue {r['queue']}" if r["queue"] else "")]
    for c in r["components"]:
        out.append("")
        size = (f"{c['nodeCount']} nodes x {c['gpusPerPod']} GPUs = {c['totalGpus']} GPUs" if c["multinode"]
                else f"{c['gpusPerPod']} GPUs per pod, {c['totalGpus']} total")
        out.append(paint(f"component {c['name']}", "info", color) + f" ({c['type'] or 'no type'}, {c['backend']}): {size}")
        out.append(f"  mode {c['mode']}: {c['modeReason']}")
        for role in c["roles"]:
            out += _format_role(role, wide)
    if r["findings"]:
        out += ["", "Findings:"]
        rows = []
        for f in r["findings"]:
            row = [paint(f["severity"], f["severity"], color), f["code"], f["component"] or "-", f["message"]]
            rows.append(row + ([f["hint"]] if wide else []))
        out.append(grid(rows, ["severity", "code", "component", "message"] + (["hint"] if wide else [])))
        if not wide:
            out.append("(-o wide shows the hint for each finding)")
    return "\n".join(out)


def _format_role(role: dict, wide: bool) -> list:
    spec = role["podSpec"]
    containers = spec.get("containers") or []
    main = containers[0] if containers else {}
    out = [f"  role {role['name']} x{role['replicas']}  image {main.get('image') or '(none)'}"]
    out += _wrap("command", _cmdline(main))
    env = main.get("env") or []
    if env:
        shown = [f"{e['name']}={_env_value(e)}" for e in env]
        out += _wrap("env", " ".join(shown) if wide else ", ".join(e["name"] for e in env))
    probes = [f"{p}={_probe(main.get(p + 'Probe'))}" for p in ("liveness", "readiness", "startup")]
    out.append(f"    probes:  {', '.join(probes)}")
    for ic in spec.get("initContainers") or []:
        out += _wrap(f"init {ic['name']}", _cmdline(ic))
    mounts = [f"{m['name']}:{m['mountPath']}{' (ro)' if m.get('readOnly') else ''}" for m in main.get("volumeMounts") or []]
    if mounts:
        out += _wrap("mounts", ", ".join(mounts))
    return out


def _cmdline(container: dict) -> str:
    parts = list(container.get("command") or []) + list(container.get("args") or [])
    return " ".join(shlex.quote(p) for p in parts) if parts else "(image default)"


def _wrap(label: str, text: str) -> list:
    lines = textwrap.wrap(text, WIDTH - 14, break_long_words=False, break_on_hyphens=False) or [""]
    head = f"    {label}:"
    out = [f"{head:<14}{lines[0]}"] if len(head) < 14 else [head, " " * 14 + lines[0]]
    out += [" " * 14 + line for line in lines[1:]]
    return out


def _env_value(e: dict) -> str:
    if "value" in e:
        return str(e["value"])
    ref = e.get("valueFrom") or {}
    if "fieldRef" in ref:
        return f"<{ref['fieldRef'].get('fieldPath')}>"
    return "<ref>"


def _probe(p) -> str:
    if not p:
        return "none"
    if "httpGet" in p:
        return f"http {p['httpGet'].get('path')}:{p['httpGet'].get('port')}"
    if "tcpSocket" in p:
        return f"tcp:{p['tcpSocket'].get('port')}"
    if "exec" in p:
        return "exec"
    return "set"


def format_field_docs(d: dict, wide: bool, color: bool) -> str:
    out = [f"GROUP:      {d['group']}", f"KIND:       {d['kind']}", f"VERSION:    {d['version']}", ""]
    if d["field"]:
        out += [f"FIELD: {d['field'].split('.')[-1]} <{d['type']}>", ""]
    out.append("DESCRIPTION:")
    for para in (d["description"] or "<empty>").split("\n"):
        out += ["    " + line for line in (textwrap.wrap(para, 90) or [""])]
    if d["multinodeNotes"]:
        out += ["", "MULTINODE:"] + ["    " + line for line in textwrap.wrap(d["multinodeNotes"], 90)]
    if d["fields"]:
        out += ["", "FIELDS:"]
        for f in d["fields"]:
            indent = "  " * (f["depth"] + 2)
            req = " -required-" if f["required"] else ""
            out.append(f"{indent}{f['name']}\t<{f['type']}>{req}")
            if not any(x["depth"] > 0 for x in d["fields"]) and f["description"]:
                out += [indent + "  " + line for line in textwrap.wrap(f["description"], 86)]
                out.append("")
    return "\n".join(out)


COMMANDS = [explain_command]
