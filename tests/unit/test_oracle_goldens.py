"""explain renders what the real operator renders: every golden under tests/data/oracle/goldens/
(operator 1.5) and goldens-1.6.0/ (the 1.6 rendering code, origin 1.6.0).

The goldens are the Dynamo operator's own Go rendering code run offline (ai-dynamo/dynamo
@2a6da14c, the 1.6 files overlaid for 1.6; see tests/data/oracle/PROVENANCE.md) on the corpus,
on tests/data/oracle/cases/ and, at 1.6, on the role templates of cases-1.6/. The comparison is
tests/generative/compare.py's.
For every DGD, both providers (grove: the PodCliqueSet's cliques; lws: the Deployments and
LeaderWorkerSets of the DCDs), every component and role: replicas and the pod spec must be equal
after Go's omitempty only (null, empty map, empty list and empty-string values dropped) -- the
worker hash (DYN_NAMESPACE_WORKER_SUFFIX, worker DCD names) included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

from kubectl_dynamo.commands import explain
from kubectl_dynamo.inputs import manifests
from kubectl_dynamo.operator import api
from tests.generative.compare import compare_objects, compare_roles, diff, normalise, omitempty

REPO = Path(__file__).resolve().parents[2]
ORACLE_DATA = REPO / "tests" / "data" / "oracle"
# goldens/: the 1.5 oracle at origin 1.5.0; goldens-1.6.0/: the 1.6 oracle (1.6 rendering files over
# the 1.5 tree, PROVENANCE.md) at origin 1.6.0, the corpus, cases/ and the role templates of cases-1.6/.
GOLDEN_DIRS = {"goldens": "1.5.0", "goldens-1.6.0": "1.6.0"}
GOLDENS = sorted(g for d in GOLDEN_DIRS for g in (ORACLE_DATA / d).rglob("*.json"))
# Recorded but not compared: the 1.6 oracle renders TensorRT-LLM with the 1.5 backend, so its role
# template output is no evidence about 1.6 (cases-1.6/role-templates-trtllm-hybrid.yaml).
HYBRID_ONLY = {"role-templates-trtllm-hybrid.json"}


def version_of(golden: Path) -> str:
    return GOLDEN_DIRS[golden.relative_to(ORACLE_DATA).parts[0]]


def _cases():
    for golden in GOLDENS:
        if golden.name in HYBRID_ONLY:
            continue
        for provider in ("grove", "lws"):
            yield pytest.param(golden, provider, id=f"{golden.relative_to(ORACLE_DATA)}-{provider}")


def _explained(golden: Path, provider: str, objects: bool = False):
    recorded = json.loads(golden.read_text())
    docs = manifests.load(str(REPO / recorded["file"]))
    items = {it["name"]: it for it in explain.explain_documents(
        docs, orchestrator=provider, operator_version=version_of(golden), objects=objects)["items"]}
    assert recorded["dgds"], f"{golden.name}: the oracle rendered no DGD"
    return recorded, items


@pytest.mark.parametrize("golden,provider", list(_cases()))
def test_explain_matches_operator(golden: Path, provider: str):
    recorded, items = _explained(golden, provider)
    problems: List[str] = []
    for dgd in recorded["dgds"]:
        problems += compare_roles(dgd["name"], dgd[provider], items[dgd["name"]])[0]
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("directory", sorted(GOLDEN_DIRS))
def test_goldens_cover_corpus_and_cases(directory: str):
    """Every corpus manifest and every hand-written case has a golden at each version (regenerate
    with scripts/oracle-goldens ORACLE_BINARY --operator-version V)."""
    data = REPO / "tests" / "data"
    dirs = [data / "corpus", data / "oracle" / "cases"] + ([data / "oracle" / "cases-1.6"] if directory != "goldens" else [])
    inputs = sorted(p for d in dirs for p in d.rglob("*.yaml"))
    recorded = {json.loads(g.read_text())["file"] for g in (ORACLE_DATA / directory).rglob("*.json")}
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
        if version_of(golden) != "1.5.0":
            continue  # the 1.6 hash rules: checked through DYN_NAMESPACE_WORKER_SUFFIX in the pod specs
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
        if version_of(golden) != "1.5.0":
            continue  # one conversion, checked at 1.5
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
        assert not diff(expected, omitempty(spec)), (stored, diff(expected, omitempty(spec))[:10])


@pytest.mark.parametrize("golden,provider", list(_cases()))
def test_objects_match_operator(golden: Path, provider: str):
    """``explain --objects``: the PodCliqueSet (grove) or the Deployments / LeaderWorkerSets (lws),
    names, labels, annotations, replicas, sizes, start order, scaling groups, claim templates."""
    recorded, items = _explained(golden, provider, objects=True)
    problems: List[str] = []
    for dgd in recorded["dgds"]:
        item = items[dgd["name"]]
        if provider == "grove" and dgd["grove"].get("podCliqueSet"):
            assert [o["kind"] for o in item["objects"]] == ["PodCliqueSet"]
        component_path = not dgd[provider].get("podCliqueSet")
        if version_of(golden) != "1.5.0" and component_path and "roles" in json.dumps(dgd[provider].get("storedDGD") or {}):
            continue  # the 1.6 oracle's LWS pod metadata for role templates is 1.5 code (PROVENANCE.md)
        problems += compare_objects(dgd["name"], dgd[provider], item, provider)
    assert not problems, "\n".join(problems[:40])
