"""explain renders what the real operator renders: every golden under tests/data/oracle/goldens/.

The goldens are the Dynamo operator's own Go rendering code run offline (ai-dynamo/dynamo
@2a6da14c, see tests/data/oracle/PROVENANCE.md) on the corpus and on tests/data/oracle/cases/.
For every DGD, both providers (grove: the PodCliqueSet's cliques; lws: the Deployments and
LeaderWorkerSets of the DCDs), every component and role: replicas and the pod spec must be equal
after Go's omitempty only (null, empty map, empty list and empty-string values dropped) -- the
worker hash (DYN_NAMESPACE_WORKER_SUFFIX, worker DCD names) included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from kubectl_dynamo.commands import explain
from kubectl_dynamo.inputs import manifests
from kubectl_dynamo.operator import api

REPO = Path(__file__).resolve().parents[2]
GOLDENS = sorted((REPO / "tests" / "data" / "oracle" / "goldens").rglob("*.json"))
OPERATOR_VERSION = "1.5.0"  # the oracle's defaulting webhook stamps this origin version
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


def _diff(a, b, path="") -> List[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                out.append(f"{path}.{k}: only in the operator: {json.dumps(a[k])[:300]}")
            elif k not in a:
                out.append(f"{path}.{k}: only in explain: {json.dumps(b[k])[:300]}")
            else:
                out += _diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: operator {json.dumps(a)[:300]} != explain {json.dumps(b)[:300]}"]


def _cases():
    for golden in GOLDENS:
        for provider in ("grove", "lws"):
            yield pytest.param(golden, provider, id=f"{golden.relative_to(golden.parents[1])}-{provider}")


@pytest.mark.parametrize("golden,provider", list(_cases()))
def test_explain_matches_operator(golden: Path, provider: str):
    recorded = json.loads(golden.read_text())
    docs = manifests.load(str(REPO / recorded["file"]))
    items = {it["name"]: it for it in explain.explain_documents(
        docs, orchestrator=provider, operator_version=OPERATOR_VERSION)["items"]}
    assert recorded["dgds"], f"{golden.name}: the oracle rendered no DGD"
    problems = []
    for dgd in recorded["dgds"]:
        item = items[dgd["name"]]
        want, errors = oracle_roles(dgd[provider])
        got = explain_roles(item)
        if errors:
            # The operator refuses (part of) this DGD: explain must say so with an error finding.
            if not any(f["severity"] == "error" for f in item["findings"]):
                problems.append(f"{dgd['name']}: operator fails ({errors[0][:200]}) but explain has no error finding")
            got = {c: r for c, r in got.items() if c in want}
        if sorted(want) != sorted(got):
            problems.append(f"{dgd['name']}: components operator={sorted(want)} explain={sorted(got)}")
            continue
        for comp, roles in want.items():
            if sorted(roles) != sorted(got[comp]):
                problems.append(f"{dgd['name']}/{comp}: roles operator={sorted(roles)} explain={sorted(got[comp])}")
                continue
            for role, w in roles.items():
                g = got[comp][role]
                where = f"{dgd['name']}/{comp}/{role}"
                if w["replicas"] != g["replicas"]:
                    problems.append(f"{where}: replicas operator={w['replicas']} explain={g['replicas']}")
                problems += [f"{where}{d}" for d in _diff(normalise(w["podSpec"]), normalise(g["podSpec"]))]
    assert not problems, "\n".join(problems[:40])


def test_goldens_cover_corpus_and_cases():
    """Every corpus manifest and every hand-written case has a golden (regenerate with
    scripts/oracle-goldens ORACLE_BINARY)."""
    data = REPO / "tests" / "data"
    inputs = sorted(p for d in (data / "corpus", data / "oracle" / "cases") for p in d.rglob("*.yaml"))
    recorded = {json.loads(g.read_text())["file"] for g in GOLDENS}
    missing = [str(p.relative_to(REPO)) for p in inputs if str(p.relative_to(REPO)) not in recorded]
    assert inputs and not missing, missing


def test_normalisation_is_only_omitempty():
    pod = {"containers": [{"name": "main", "resources": {}, "args": [], "workingDir": "",
                           "env": [{"name": api.ENV_WORKER_SUFFIX, "value": "1a2b3c4d"}, {"name": "X", "value": ""}]}],
           "nodeSelector": None, "hostNetwork": False}
    assert normalise(pod) == {"containers": [{"name": "main", "env": [
        {"name": api.ENV_WORKER_SUFFIX, "value": "1a2b3c4d"}, {"name": "X"}]}], "hostNetwork": False}


def _stored_hashes():
    for golden in GOLDENS:
        for dgd in json.loads(golden.read_text())["dgds"]:
            stored = dgd["lws"].get("storedDGD") or {}
            if (stored.get("metadata", {}).get("annotations") or {}).get(api.ANN_WORKER_HASH_V2):
                yield pytest.param(stored, id=f"{golden.stem}/{dgd['name']}")


@pytest.mark.parametrize("stored", list(_stored_hashes()))
def test_worker_hash_of_the_operators_stored_dgd(stored: dict):
    """The worker hash computed from the operator's own stored DGD equals the one it stored
    (ai-dynamo/dynamo deploy/operator/internal/dynamo/hash.go @2a6da14c): the Go encoding is right."""
    from kubectl_dynamo.operator import workerhash

    backend = workerhash.dgd_backend_framework(stored["spec"])
    assert backend is not None
    assert workerhash.compute(stored, backend) == stored["metadata"]["annotations"][api.ANN_WORKER_HASH_V2]


def test_sha256_without_openssl_is_sha256():
    """The digest behind the worker and model hashes (CPython's built-in SHA-256 when it has one):
    the FIPS 180-2 examples (one block, two blocks once padded) and the empty message."""
    from kubectl_dynamo.operator.workerhash import sha256_hex

    assert sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == (
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _alpha_dgds():
    for golden in GOLDENS:
        recorded = json.loads(golden.read_text())
        for dgd in recorded["dgds"]:
            if dgd["apiVersion"] == api.V1ALPHA1:
                yield pytest.param(recorded["file"], dgd, id=f"{golden.stem}/{dgd['name']}")


@pytest.mark.parametrize("source,dgd", list(_alpha_dgds()))
def test_conversion_matches_the_operators_stored_object(source: str, dgd: dict):
    """``upgrade``'s conversion yields the spec the operator stores for a v1alpha1 DGD (its
    ``ConvertTo``, then the API server's defaults and the webhook's ``replicas: 1``), except that a
    manifest cannot carry a type v1beta1's enum rejects (``default``/``main``: warned, dropped)."""
    from kubectl_dynamo.operator import defaults
    from kubectl_dynamo.operator.convert import to_v1beta1

    doc = next(d.data for d in manifests.load(str(REPO / source))
               if d.is_dgd and d.data["metadata"]["name"] == dgd["name"])
    want = omitempty(dgd["lws"]["storedDGD"]["spec"])  # the component provider: no Grove minAvailable
    for stored in (True, False):
        converted, problems = to_v1beta1(defaults.apply(json.loads(json.dumps(doc)), "v1alpha1"), stored=stored)
        spec = defaults.apply(json.loads(json.dumps(converted)), "v1beta1")["spec"]
        for comp in spec.get("components") or []:
            comp.setdefault("replicas", 1)
        expected = json.loads(json.dumps(want))
        if not stored:
            for comp in expected.get("components") or []:
                if comp.get("type") not in (None, *api.COMPONENT_TYPES):
                    assert any(p["path"].endswith(f"{comp['name']}.componentType") for p in problems)
                    del comp["type"]
        assert not _diff(expected, omitempty(spec)), (stored, _diff(expected, omitempty(spec))[:10])


def _without_pod_specs(obj: dict) -> dict:
    """The object minus its pod specs (compared role by role above) and what the API server owns."""
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


@pytest.mark.parametrize("golden,provider", list(_cases()))
def test_objects_match_operator(golden: Path, provider: str):
    """``explain --objects``: the PodCliqueSet (grove) or the Deployments / LeaderWorkerSets (lws),
    names, labels, annotations, replicas, sizes, start order, scaling groups, claim templates."""
    recorded = json.loads(golden.read_text())
    docs = manifests.load(str(REPO / recorded["file"]))
    items = {it["name"]: it for it in explain.explain_documents(
        docs, orchestrator=provider, operator_version=OPERATOR_VERSION, objects=True)["items"]}
    problems = []
    for dgd in recorded["dgds"]:
        render = dgd[provider]
        want = [render["podCliqueSet"]] if render.get("podCliqueSet") else [
            w.get("deployment") or w.get("leaderWorkerSet") for w in render.get("workloads") or []]
        got = items[dgd["name"]]["objects"]
        if provider == "lws":  # the oracle lists DCDs by name
            got = sorted(got, key=lambda o: o["metadata"]["name"])
            want = sorted(want, key=lambda o: o["metadata"]["name"])
        if provider == "grove":
            assert [o["kind"] for o in got] == ["PodCliqueSet"]
        if len(want) != len(got):
            problems.append(f"{dgd['name']}: {len(want)} objects from the operator, {len(got)} from explain")
            continue
        for w, g in zip(want, got):
            problems += [f"{dgd['name']}/{g['metadata']['name']}{d}" for d in _diff(_without_pod_specs(w), _without_pod_specs(g))]
    assert not problems, "\n".join(problems[:40])
