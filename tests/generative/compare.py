"""explain against a recorded oracle render: the one comparison every golden test uses.

Strict: for each component and role, replicas and the pod spec must be equal after Go's omitempty
only (null, empty map, empty list and empty-string values dropped) -- the worker hash
(``DYN_NAMESPACE_WORKER_SUFFIX``, worker DCD names) included. Where the operator fails to render
(the whole DGD or one DCD), explain must give an error finding. ``--objects``: the PodCliqueSet
or the Deployments / LeaderWorkerSets minus their pod specs (compared role by role) and what the
API server owns.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Dict, List, Tuple

from kubectl_dynamo.operator import api

ROLE_SUFFIX = {"ldr": "leader", "wkr": "worker"}

Roles = Dict[str, Dict[str, dict]]  # component -> role -> {"replicas", "podSpec"}


def omitempty(value):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = omitempty(v)
            if v is None or v == {} or v == [] or v == "":
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [omitempty(v) for v in value]
    return value


def normalise(pod_spec: dict) -> dict:
    return omitempty(pod_spec or {})


def role_of(clique: str, component: str) -> str:
    """Clique name -> explain role: ``<comp>`` main, ``<comp>-ldr`` leader, ``<comp>-wkr`` worker,
    other suffixes (GMS ``gms-<rank>``, per-rank ``wkr-<rank>``) with ldr/wkr spelled out."""
    rest = clique[len(component):].lstrip("-")
    if not rest:
        return "main"
    return "-".join(ROLE_SUFFIX.get(part, part) for part in rest.split("-"))


def oracle_roles(render: dict) -> Tuple[Roles, List[str]]:
    """The operator's roles, and the render errors (whole DGD or one DCD)."""
    roles: Roles = {}
    if render.get("error"):
        return roles, [render["error"]]
    errors = []
    pcs = render.get("podCliqueSet")
    if pcs is not None:
        for clique in pcs["spec"]["template"].get("cliques") or []:
            comp = clique["labels"][api.LABEL_COMPONENT]
            roles.setdefault(comp, {})[role_of(clique["name"], comp.lower())] = {
                "replicas": clique["spec"].get("replicas"), "podSpec": clique["spec"].get("podSpec")}
        return roles, errors
    for w in render.get("workloads") or []:
        comp = w["component"]
        if w.get("error"):
            errors.append(f"{comp}: {w['error']}")
            continue
        if w["kind"] == "Deployment":
            spec = w["deployment"]["spec"]
            roles[comp] = {"main": {"replicas": spec.get("replicas"), "podSpec": spec["template"]["spec"]}}
        else:
            t = w["leaderWorkerSet"]["spec"]["leaderWorkerTemplate"]
            size = t.get("size") or 1
            roles[comp] = {"leader": {"replicas": 1, "podSpec": t["leaderTemplate"]["spec"]},
                           "worker": {"replicas": size - 1, "podSpec": t["workerTemplate"]["spec"]}}
    return roles, errors


def explain_roles(item: dict) -> Roles:
    return {c["name"]: {r["name"]: {"replicas": r["replicas"], "podSpec": r["podSpec"]} for r in c["roles"]}
            for c in item["components"]}


def diff(a, b, path="") -> List[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                out.append(f"{path}.{k}: only in the operator: {json.dumps(a[k])[:300]}")
            elif k not in a:
                out.append(f"{path}.{k}: only in explain: {json.dumps(b[k])[:300]}")
            else:
                out += diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: operator {json.dumps(a)[:300]} != explain {json.dumps(b)[:300]}"]


def compare_roles(name: str, render: dict, item: dict) -> Tuple[List[str], int, int]:
    """Problems, components compared and components exact for one DGD and provider."""
    want, errors = oracle_roles(render)
    got = explain_roles(item)
    problems: List[str] = []
    if errors:
        # The operator refuses (part of) this DGD: explain must say so with an error finding.
        if not any(f["severity"] == "error" for f in item["findings"]):
            problems.append(f"{name}: operator fails ({errors[0][:200]}) but explain has no error finding")
        got = {c: r for c, r in got.items() if c in want}
    if sorted(want) != sorted(got):
        problems.append(f"{name}: components operator={sorted(want)} explain={sorted(got)}")
        return problems, max(len(want), 1), 0
    exact = 0
    for comp, roles in want.items():
        if sorted(roles) != sorted(got[comp]):
            problems.append(f"{name}/{comp}: roles operator={sorted(roles)} explain={sorted(got[comp])}")
            continue
        before = len(problems)
        for role, w in roles.items():
            g = got[comp][role]
            where = f"{name}/{comp}/{role}"
            if w["replicas"] != g["replicas"]:
                problems.append(f"{where}: replicas operator={w['replicas']} explain={g['replicas']}")
            problems += [f"{where}{d}" for d in diff(normalise(w["podSpec"]), normalise(g["podSpec"]))]
        exact += len(problems) == before
    if errors and not want:
        return problems, 1, int(not problems)
    return problems, len(want), exact


def without_pod_specs(obj: dict) -> dict:
    """The object minus its pod specs (compared role by role) and what the API server owns."""
    obj = json.loads(json.dumps(obj))
    for key in ("status", "apiVersion", "kind"):
        obj.pop(key, None)
    spec = obj.get("spec") or {}
    if "cliques" in spec.get("template", {}):
        for clique in spec["template"]["cliques"]:
            clique["spec"].pop("podSpec", None)
    elif "leaderWorkerTemplate" in spec:
        for t in ("leaderTemplate", "workerTemplate"):
            spec["leaderWorkerTemplate"][t].pop("spec", None)
    elif "template" in spec:
        spec["template"].pop("spec", None)
    return omitempty(obj)


def oracle_objects(render: dict) -> List[dict]:
    return [render["podCliqueSet"]] if render.get("podCliqueSet") else [
        w.get("deployment") or w.get("leaderWorkerSet") for w in render.get("workloads") or []
        if not w.get("error")]


def compare_objects(name: str, render: dict, item: dict, provider: str) -> List[str]:
    want = oracle_objects(render)
    if render.get("error"):
        return []  # nothing rendered: compare_roles holds explain to an error finding
    got = item.get("objects") or []
    if not render.get("podCliqueSet"):  # component workloads (also with Grove on): the oracle lists DCDs by name
        got = sorted(got, key=lambda o: o["metadata"]["name"])
        want = sorted(want, key=lambda o: o["metadata"]["name"])
    if any(w.get("error") for w in render.get("workloads") or []):
        names = {w["metadata"]["name"] for w in want}
        got = [g for g in got if g["metadata"]["name"] in names]
    if len(want) != len(got):
        return [f"{name}: {len(want)} objects from the operator, {len(got)} from explain"]
    problems = []
    for w, g in zip(want, got):
        problems += [f"{name}/{g['metadata']['name']}{d}" for d in diff(without_pod_specs(w), without_pod_specs(g))]
    return problems


# -- the generated sets (tests/data/generative/oracle-<origin>.jsonl.gz) --------------------------------

def records(path: Path) -> List[dict]:
    """The records of one recorded generated set: each DGD drawn, its admission and the renders."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def has_role_templates(doc: dict) -> bool:
    return any(r.get("podTemplate") for c in (doc.get("spec") or {}).get("components") or []
               for r in c.get("roles") or [])


def check(record: dict, provider: str, origin: str, objects: bool = True) -> Tuple[List[str], int, int]:
    """(problems, components compared, components exact) of explain against one recorded DGD's
    render with ``provider`` (which must have admitted it); ``objects``: the objects too."""
    from kubectl_dynamo.commands import explain

    doc = record["input"]
    name = f"{doc['metadata']['name']}[{provider}]"
    item = explain.explain_one(json.loads(json.dumps(doc)), orchestrator=provider, operator_version=origin,
                               objects=objects)
    problems, compared, exact = compare_roles(name, record[provider], item)
    # The 1.6 oracle renders a role template's LeaderWorkerSet pod metadata with 1.5 code
    # (PROVENANCE.md): its pod specs count, that metadata is no evidence about 1.6.
    component_path = not record[provider].get("podCliqueSet")  # DCDs: Deployments / LeaderWorkerSets
    if objects and not (origin.startswith("1.6") and component_path and has_role_templates(doc)):
        problems += compare_objects(name, record[provider], item, provider)
    return problems, compared, exact



# explain's findings that say the operator's rendering refuses (the DGD or one component); engine and
# cluster findings (parallelism-mismatch, no-gpu-request, a missing queue, ...) are errors of another actor
RENDER_REFUSAL_CODES = frozenset({"render-error", "compilation-cache-invalid", "backend-framework-mismatch",
                                  "backend-framework-ambiguous", "gpu-count-invalid"})


def operator_refuses(render: dict) -> List[str]:
    """The operator's render errors for one provider: the whole DGD's, or one DCD's."""
    return oracle_roles(render)[1]


def refusal_agreement(record: dict, provider: str, origin: str) -> Tuple[bool, bool, List[dict]]:
    """(operator refuses, explain says the operator refuses, those findings) for one recorded DGD the
    operator's admission took with ``provider``: the rule is that the two booleans agree."""
    from kubectl_dynamo.commands import explain

    item = explain.explain_one(json.loads(json.dumps(record["input"])), orchestrator=provider, operator_version=origin)
    refusals = [f for f in item["findings"] if f["severity"] == "error" and f["code"] in RENDER_REFUSAL_CODES]
    return bool(operator_refuses(record[provider])), bool(refusals), refusals


def _unordered(text: str) -> str:
    # the operator lists frameworks detected in a command in Go map order: [sglang vllm] or [vllm sglang]
    return re.sub(r"\[([a-z]+(?: [a-z]+)+)\]", lambda m: "[" + " ".join(sorted(m.group(1).split())) + "]", text)


def carries_operator_message(operator_error: str, findings: List[dict]) -> bool:
    """Whether a finding quotes the operator's own reason (the innermost part of its wrapped error)."""
    parts = _unordered(operator_error).split(": ")
    reasons = [": ".join(parts[i:]) for i in range(len(parts))]
    return any(any(len(r) >= 20 and r in _unordered(f["message"]) for r in reasons) for f in findings)
