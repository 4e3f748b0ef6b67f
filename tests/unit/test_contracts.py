"""The -o json contracts (kubectl_dynamo/data/schemas, docs/contracts.md) against real outputs.

Every command's JSON is rendered through the real CLI and renderer on real inputs: the corpus of
upstream DGDs (tests/data/corpus) for explain/upgrade, and the recorded real cluster states
(tests/data/recorded, see its PROVENANCE.md) served by RecordedCluster for detect, doctor, get,
tree, version, install --dry-run and collect. Each output must validate against its schema, and
every object in a schema pins its keys (additionalProperties: false), so a renamed or removed key
fails here before a user's script breaks.
"""

from __future__ import annotations

import copy
import io
import json
import tarfile
import typing
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from click.testing import CliRunner

from kubectl_dynamo import contracts
from kubectl_dynamo.cli import PROG, cli
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.findings import catalogue

DATA = Path(__file__).resolve().parent.parent / "data"
RECORDED = DATA / "recorded"
STATES = sorted(p.name for p in RECORDED.iterdir() if p.is_dir() and (p / "manifest.json").exists())
CORPUS = sorted((DATA / "corpus").glob("*/*.yaml"))
VALIDATORS = {name: contracts.validator(name) for name in contracts.SCHEMAS}


def problems(name: str, data: Any) -> List[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in VALIDATORS[name].iter_errors(data)]


def cli_json(args: List[str], state: Optional[str] = None, namespace: Optional[str] = None) -> Tuple[int, Any]:
    """Run ``kubectl dynamo ARGS`` (offline, or on a recorded state) and parse what it printed."""
    out = io.StringIO()

    def cluster(_target):
        assert state, "this command should not connect"
        return RecordedCluster(str(RECORDED / state), namespace)

    env = Environment(stdin=io.StringIO(), stdout=out, stderr=io.StringIO(), cluster_factory=cluster)
    result = CliRunner().invoke(cli, args, prog_name=PROG, obj=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code in (0, 1), (args, result.exit_code, env.stderr.getvalue())
    return result.exit_code, json.loads(out.getvalue())


# -- the schemas themselves ------------------------------------------------------------------------
def walk(node: Any, path: str = "") -> Iterator[Tuple[str, Dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{path}/{i}")


@pytest.mark.parametrize("name", list(contracts.SCHEMAS))
def test_schema_is_draft_2020_12_with_its_id(name):
    from jsonschema import Draft202012Validator

    s = contracts.schema(name)
    Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["$id"] == f"urn:kubectl-dynamo:{name}"
    assert s.get("title") and s.get("description")


@pytest.mark.parametrize("name", list(contracts.SCHEMAS))
def test_every_object_with_properties_pins_its_keys(name):
    """A key the schema does not name is an error, so renaming a key fails validation; an object
    without properties is a Kubernetes shape or a map, and says so."""
    for path, node in walk(contracts.schema(name)):
        if "properties" in node and not path.endswith("/properties"):
            assert node.get("additionalProperties") is False or name == "upgrade", path
            assert set(node.get("required", [])) <= set(node["properties"]), path
        if node.get("type") == "object" and "properties" not in node and not path.endswith("/properties"):
            assert "additionalProperties" in node or node.get("description"), f"{name}{path}: an unexplained open object"


def _typed_dict(hint: Any) -> Any:
    """The TypedDict a field holds, itself or as the items of a list (after Optional), else None."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is typing.Union and len(args) == 1:
        return _typed_dict(args[0])
    if typing.get_origin(hint) is list and args:
        return _typed_dict(args[0])
    return hint if typing.is_typeddict(hint) else None


def _same_shape(typed: Any, body: Dict[str, Any], where: str) -> None:
    hints = typing.get_type_hints(typed)
    assert set(hints) == set(body["properties"]), where
    assert set(typed.__required_keys__) == set(body.get("required", [])), where
    for key, hint in hints.items():
        inner, node = _typed_dict(hint), body["properties"][key]
        node = node.get("items", node) if node.get("type") == "array" else node
        if inner is not None and "properties" in node:  # nested TypedDicts match their schema objects too
            _same_shape(inner, node, f"{where}.{key}")


@pytest.mark.parametrize("name", sorted(contracts.TYPES))
def test_typed_dict_has_the_schema_keys(name):
    """The TypedDict mypy checks the producers with and the published schema are the same shape, at every
    depth where both name the keys."""
    typed = contracts.TYPES[name]
    s = contracts.schema(name)
    body = {"explain": lambda: s["$defs"]["dgd"], "check": lambda: s["oneOf"][0]}.get(name, lambda: s)()
    _same_shape(typed, body, name)


def test_install_blocked_typed_dicts_have_the_schema_keys():
    blocked = contracts.schema("install")["properties"]["steps"]["items"]["properties"]["blocking"]["items"]
    for typed, body in ((contracts.InstallBlocked, blocked),
                        (contracts.BlockedEvidence, blocked["properties"]["evidence"]["items"]),
                        (contracts.BlockedCause, blocked["properties"]["causes"]["items"])):
        assert set(typing.get_type_hints(typed)) == set(body["properties"]) == set(body["required"])


# -- real outputs ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_explain_and_upgrade_of_the_corpus(path):
    for extra in ([], ["--objects"], ["--diff"], ["--orchestrator", "lws", "--objects"]):
        _, data = cli_json(["explain", "dgd", "-f", str(path), "-o", "json", *extra])
        assert problems("explain", data) == [], extra
    _, data = cli_json(["upgrade", "dgd", "-f", str(path), "-o", "json"])
    assert problems("upgrade", data) == []


def test_explain_of_several_documents_is_the_list_form():
    path = DATA / "explain" / "mixed.yaml"
    _, data = cli_json(["explain", "dgd", "-f", str(path), "-o", "json"])
    assert "items" in data and "skipped" in data
    assert problems("explain", data) == []


def test_explain_of_several_files_names_each_skipped_document():
    paths = [str(DATA / "explain" / "mixed.yaml"), str(CORPUS[0])]
    _, data = cli_json(["explain", "dgd", "-f", paths[0], "-f", paths[1], "-o", "json"])
    assert data["skipped"] and all(s["file"] == paths[0] for s in data["skipped"])
    assert problems("explain", data) == []


@pytest.mark.parametrize("args", [["dgd.spec"], ["dgd.spec.components.multinode"], ["dgd.spec", "--recursive"],
                                  ["dgd.spec", "--api-version", "v1alpha1"]])
def test_explain_field_docs(args):
    _, data = cli_json(["explain", *args, "-o", "json"])
    assert problems("explain-fields", data) == []


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("extra", [[], ["--orchestrator", "lws"]])
def test_generate(backend, extra):
    _, data = cli_json(["generate", "dgd", "my", "--backend", backend, "--model", "Qwen/Qwen3-0.6B", "--nodes", "2",
                        "--gpus-per-node", "8", "-o", "json", *extra])
    assert problems("generate", data) == []


@pytest.mark.parametrize("state", STATES)
def test_cluster_commands_on_a_recorded_state(state):
    for name, args in [("detect", ["detect"]), ("doctor", ["doctor", "-A"]), ("get", ["get", "-A"]),
                       ("version", ["version"]), ("install", ["install", "--orchestrator", "grove", "--dry-run"]),
                       ("install", ["install", "--orchestrator", "grove", "--separately", "--dry-run"]),
                       ("install", ["install", "--orchestrator", "lws", "--dry-run"]),
                       ("placement", ["placement"])]:
        _, data = cli_json([*args, "-o", "json"], state)
        assert problems(name, data) == [], args
    _, listed = cli_json(["get", "-A", "-o", "json"], state)
    for dgd in listed["deployments"]:
        ns = ["-n", dgd["namespace"]]
        for name, args in [("get", ["get", "dgd", dgd["name"], *ns]), ("tree", ["tree", dgd["name"], *ns]),
                           ("doctor", ["doctor", dgd["name"], *ns]),
                           ("rollout-status", ["rollout", "status", dgd["name"], *ns, "--watch=false"]),
                           ("rollout-history", ["rollout", "history", dgd["name"], *ns])]:
            _, data = cli_json([*args, "-o", "json"], state, dgd["namespace"])
            assert problems(name, data) == [], args


ROLLOUT_STEPS = sorted(f"{p.parent.name}/{p.name}" for p in RECORDED.glob("*/*")  # NN/ steps (install/* are states)
                       if p.name.isdigit() and (p / "manifest.json").exists())


@pytest.mark.parametrize("step", ROLLOUT_STEPS)
def test_rollout_commands_on_every_recorded_rollout_step(step):
    """The rollout sequences (lws-rollout-*/NN) hold the operator's own status.rollingUpdate in every
    phase: status and history of each DGD in them follow their schemas."""
    _, listed = cli_json(["get", "-A", "-o", "json"], step)
    assert listed["deployments"]
    for dgd in listed["deployments"]:
        ns = ["-n", dgd["namespace"]]
        for name, args in [("rollout-status", ["rollout", "status", dgd["name"], *ns, "--watch=false"]),
                           ("rollout-history", ["rollout", "history", dgd["name"], *ns])]:
            _, data = cli_json([*args, "-o", "json"], step, dgd["namespace"])
            assert problems(name, data) == [], args


def test_version_client():
    _, data = cli_json(["version", "--client", "-o", "json"])
    assert problems("version", data) == [] and set(data) == {"clientVersion", "clientBuild"}


@pytest.mark.parametrize("state, orchestrator", [("grove-healthy", "grove"), ("lws-healthy", "lws"),
                                                 ("grove-queue-missing", "grove")])
def test_install_result(state, orchestrator):
    """The document after a run: the plan's, with ``result`` from detect on the cluster afterwards
    (here the recorded state stands for the cluster after helm)."""
    from kubectl_dynamo.commands.detect import detect_report
    from kubectl_dynamo.commands.install import plan as ins

    _, doc = cli_json(["install", "--orchestrator", orchestrator, "--dry-run", "-o", "json"], state)
    req = ins.Request(orchestrator)
    doc["dryRun"] = False
    doc["result"] = ins.outcome(req, dict(detect_report(RecordedCluster(str(RECORDED / state)))))
    assert problems("install", doc) == []


@pytest.mark.parametrize("scenario", ["quota", "pod-security", "webhook-down", "taint"])
def test_install_failed_step_with_its_blocking_workloads(scenario):
    """The document after helm gave up: the failed step carries the recorded blocked release's diagnosis
    (tests/data/recorded/install, the real API server's and scheduler's words)."""
    from kubectl_dynamo.commands.install.progress import diagnose, read

    manifest = json.loads((RECORDED / "install" / scenario / "manifest.json").read_text())
    ns = manifest["source"]["namespace"]
    cluster = RecordedCluster(str(RECORDED / "install" / scenario))
    objects = {k: items for k, (items, _) in read(cluster, ns)[1].items()}
    blocked = diagnose(objects, "grove", ns, lambda: cluster.list("/api/v1/nodes"))[1]
    _, doc = cli_json(["install", "--orchestrator", "grove", "--separately", "--dry-run", "-o", "json"], "grove-healthy")
    doc["dryRun"] = False
    doc["steps"][0].update(status="failed", blocking=json.loads(json.dumps([b.as_json() for b in blocked])))
    assert doc["steps"][0]["blocking"] and doc["steps"][0]["blocking"][0]["causes"]
    assert problems("install", doc) == []


@pytest.mark.parametrize("state", ["grove-healthy", "lws-mpi-secret-deleted"])
def test_collect_summary_and_bundle(state, tmp_path):
    from kubectl_dynamo.commands.collect import run_collect
    from tests.unit.test_daily_pure import RecordedWithLogs, tty_env

    bundle = tmp_path / "b.tar.gz"
    result = run_collect(RecordedWithLogs(str(RECORDED / state), "llm"), tty_env(False), name=None,
                         all_namespaces=True, output=str(bundle))
    assert problems("collect", json.loads(json.dumps(result.data))) == []
    found = {}
    with tarfile.open(bundle) as tar:
        for member in tar.getmembers():
            base = member.name.rsplit("/", 1)[-1]
            if base in ("collect.json", "detect.json", "doctor.json") and member.name.count("/") == 1:
                found[base] = json.load(tar.extractfile(member))
    assert set(found) == {"collect.json", "detect.json", "doctor.json"}
    assert problems("collect-manifest", found["collect.json"]) == []
    assert problems("detect", found["detect.json"]) == []
    assert problems("doctor", found["doctor.json"]) == []


def test_doctor_explain_the_catalogue_offline():
    _, every = cli_json(["doctor", "--explain", "all", "-o", "json"])
    _, one = cli_json(["doctor", "--explain", "kai-queue-missing", "-o", "json"])
    assert len(every["checks"]) == len(catalogue.ENTRIES) and one["code"] == "kai-queue-missing"
    assert problems("check", every) == [] and problems("check", one) == []


def test_doctor_skip_lists_the_skipped_findings_with_their_object():
    _, data = cli_json(["doctor", "-A", "--skip", "gang-held", "-o", "json"], "grove-gang-pending")
    skipped = [s for s in data["skipped"] if s["check"] == "gang-held"]
    assert skipped and all(s["object"] for s in skipped)
    assert problems("doctor", data) == []
    assert all("dgd" in f for f in data["findings"])


def test_every_finding_code_is_in_the_catalogue():
    """The schema pins the form of a code; the catalogue is the list (docs/checks.md)."""
    codes = set()
    for state in STATES:
        _, data = cli_json(["doctor", "-A", "-o", "json"], state)
        codes |= {f["code"] for f in data["findings"]}
    assert codes and codes <= catalogue.codes()


# -- the contracts catch what they are for ---------------------------------------------------------
@pytest.fixture(scope="module")
def doctor_output():
    return cli_json(["doctor", "-A", "-o", "json"], "grove-gang-pending")[1]


def test_a_renamed_key_fails(doctor_output):
    bad = copy.deepcopy(doctor_output)
    bad["summary"]["error"] = bad["summary"].pop("errors")
    assert problems("doctor", doctor_output) == [] and problems("doctor", bad)


def test_a_removed_finding_key_fails(doctor_output):
    bad = copy.deepcopy(doctor_output)
    del bad["findings"][0]["hint"]
    assert any("hint" in p for p in problems("doctor", bad))


def test_an_added_finding_key_fails_until_the_schema_says_so(doctor_output):
    bad = copy.deepcopy(doctor_output)
    bad["findings"][0]["url"] = "x"
    assert problems("doctor", bad)


def test_a_wrong_severity_fails(doctor_output):
    bad = copy.deepcopy(doctor_output)
    bad["findings"][0]["severity"] = "fatal"
    assert problems("doctor", bad)


# -- kubectl dynamo schema -------------------------------------------------------------------------
def test_schema_command_prints_the_shipped_schema():
    for name in contracts.SCHEMAS:
        result = CliRunner().invoke(cli, ["schema", name], prog_name=PROG, obj=Environment(
            stdin=io.StringIO(), stdout=(out := io.StringIO()), stderr=io.StringIO()))
        assert result.exit_code == 0 and json.loads(out.getvalue()) == contracts.schema(name)
    _, listed = cli_json(["schema", "-o", "json"])
    assert [r["name"] for r in listed] == list(contracts.SCHEMAS)


def test_schema_command_refuses_an_unknown_name(capsys):
    from kubectl_dynamo.cli import main

    assert main(["schema", "nope"]) == 2
    assert 'error: no schema "nope"' in capsys.readouterr().err
