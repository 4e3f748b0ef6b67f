"""``collect`` on the recorded real states (tests/data/recorded): a DGD's bundle holds that DGD and what its diagnosis
needs, nothing of its neighbours, no private value; doctor --from it finds what doctor finds on the recording.

The judge is the recording itself (real API server, real controllers' objects): doctor run on the whole recording
for one DGD is what doctor --from the narrowed bundle must print, finding for finding. Logs are stood in for (a
recording holds none; ``Logs`` serves planted lines), and planted values are put into copies of the recordings.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import re
import shutil
import string
import tarfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from kubectl_dynamo.cluster.client import Stream
from kubectl_dynamo.cluster.recorded import RecordedCluster
from kubectl_dynamo.commands.collect import Limits, run_collect
from kubectl_dynamo.commands.doctor import run_doctor
from kubectl_dynamo.errors import InputError, NotFound, UsageError
from kubectl_dynamo.model.bundle import Redactor
from tests.unit.test_daily_pure import FakeChunks, tty_env

RECORDED = Path(__file__).resolve().parent.parent / "data" / "recorded"
STATES = sorted(p.name for p in RECORDED.iterdir() if (p / "manifest.json").exists())


def dgds_of(state: str) -> List[Tuple[str, str]]:
    try:
        items = RecordedCluster(str(RECORDED / state)).list("/apis/nvidia.com/v1beta1/dynamographdeployments")
    except Exception:
        return []
    return sorted((d["metadata"]["namespace"], d["metadata"]["name"]) for d in items)


CASES = [(s, ns, n) for s in STATES for ns, n in dgds_of(s)]


class Logs(RecordedCluster):
    """A recording that serves pod logs: ``lines(namespace, pod, container)`` (a recording holds none)."""

    timeout = 30.0

    def __init__(self, path, namespace, lines=None):
        super().__init__(path, namespace)
        self.lines = lines or (lambda ns, pod, c: [f"2026-12-01T09:00:00Z {ns}/{pod} {c} says hello"])

    def stream(self, path, params=None, *, read_timeout=None):
        if (params or {}).get("previous"):
            raise NotFound("previous terminated container not found")
        parts = path.split("/")
        ns, pod = parts[parts.index("namespaces") + 1], parts[-2]
        body = "".join(line + "\n" for line in self.lines(ns, pod, params["container"])[-params["tailLines"]:])
        return Stream(FakeChunks([body.encode()]))


def members(path) -> Dict[str, bytes]:
    with tarfile.open(path) as tar:
        out = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    return out


def objects(files: Dict[str, bytes]) -> List[dict]:
    return [o for name, data in files.items() if name.startswith("resources/") for o in json.loads(data)["items"]]


def dgds(files: Dict[str, bytes]) -> List[dict]:
    return [o for name, data in files.items() if name.endswith("/dynamographdeployments.json")
            for o in json.loads(data)["items"]]


def collect(source, tmp_path, name, **kw) -> Tuple[dict, Dict[str, bytes], str]:
    out = str(tmp_path / "b.tar.gz")
    result = run_collect(source, tty_env(False), name=name, all_namespaces=kw.pop("all_namespaces", False),
                         output=out, force=True, **kw)
    return result.data, members(out), out


def token(name: str) -> re.Pattern:
    """A name where it stands or begins a derived name (``sglang-mn`` in ``sglang-mn-0-decode``)."""
    return re.compile(rb"(?<![A-Za-z0-9-])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9])")


@pytest.mark.parametrize("state,namespace,name", CASES, ids=[f"{s}/{n}" for s, _, n in CASES])
def test_a_dgds_bundle_holds_it_only_and_doctor_finds_the_same(state, namespace, name, tmp_path):
    path = str(RECORDED / state)
    summary, files, out = collect(Logs(path, namespace), tmp_path, name)
    assert summary["scope"] == {"kind": "dgd", "namespace": namespace, "dgd": name}
    # nothing of a neighbouring DGD: not its object, not its name
    neighbours = [n for ns, n in dgds_of(state) if n != name and not name.startswith(n) and not n.startswith(name)]
    for other in neighbours:
        assert [f for f, data in files.items() if token(other).search(data) or other in f] == [], other
    assert [o["metadata"]["name"] for o in dgds(files)] == [name]
    # of other namespaces, only the controllers' and the webhooks' objects
    manifest = json.loads(files["manifest.json"])
    assert manifest["scope"]["kind"] == "dgd" and manifest["namespace"] == namespace
    held = {o["metadata"].get("namespace") for o in objects(files)} - {None}
    assert held <= set(manifest["namespaces"]) and namespace in held
    live = [d for d in RecordedCluster(path).list("/apis/apps/v1/deployments")]
    from kubectl_dynamo.model.platform import controller_deployments

    homes = {d["metadata"]["namespace"] for d in controller_deployments(live)} | {namespace}
    hooks = {((w.get("clientConfig") or {}).get("service") or {}).get("namespace") for o in objects(files)
             for w in o.get("webhooks") or []}
    assert held <= homes | hooks
    # every file is listed with its size and checksum, and they match
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == set(files) - {"manifest.json"}
    assert all(hashlib.sha256(files[p]).hexdigest() == f["sha256"] and len(files[p]) == f["bytes"]
               for p, f in listed.items())
    # the bundle is enough for doctor on this DGD: the same findings, finding for finding
    want = run_doctor(RecordedCluster(path, namespace), all_namespaces=False, name=name).data["findings"]
    got = run_doctor(RecordedCluster(out), all_namespaces=True, name=None).data["findings"]
    assert got == want
    assert json.loads(files["doctor.json"])["findings"] == want


SAMPLE = random.Random(35).sample(CASES, 8)  # anonymizing is slower: a drawn sample, the same every run


@pytest.mark.parametrize("state,namespace,name", SAMPLE, ids=[f"{s}/{n}" for s, _, n in SAMPLE])
def test_an_anonymized_bundle_holds_no_real_name_and_doctor_finds_the_same_causes(state, namespace, name, tmp_path):
    path = str(RECORDED / state)
    mapping = tmp_path / "names.json"
    summary, files, out = collect(Logs(path, namespace), tmp_path, name, anonymize=True, mapping=str(mapping))
    assert summary["mapping"] == str(mapping) and mapping.stat().st_mode & 0o077 == 0
    real = json.loads(mapping.read_text())["pseudonym"]
    assert namespace in real.values() and name in real.values()
    nodes = [n["metadata"]["name"] for n in RecordedCluster(path).list("/api/v1/nodes")]
    for secret in [namespace, name] + [n for n in nodes if n in real.values()]:
        assert [f for f, data in files.items() if token(secret).search(data) or secret in f] == [], secret
    assert not any(f.endswith("names.json") for f in files)  # the mapping never travels with the bundle
    want = run_doctor(RecordedCluster(path, namespace), all_namespaces=False, name=name).data["findings"]
    got = run_doctor(RecordedCluster(out), all_namespaces=True, name=None).data["findings"]
    assert sorted((f["code"], f["severity"], f["object"]["kind"]) for f in got) == \
        sorted((f["code"], f["severity"], f["object"]["kind"]) for f in want)


# -- nothing private -----------------------------------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits


def drawn_tokens(rng: random.Random) -> List[str]:
    """One token of each known shape (the providers' documented prefixes), drawn at random."""
    def run(chars, n):
        return "".join(rng.choice(chars) for _ in range(n))
    return ["hf_" + run(ALNUM, rng.randint(30, 40)), "nvapi-" + run(ALNUM + "-_", rng.randint(40, 70)),
            rng.choice(["AKIA", "ASIA"]) + run(string.ascii_uppercase + string.digits, 16),
            "ghp_" + run(ALNUM, 36),
            "eyJ" + run(ALNUM, 20) + ".eyJ" + run(ALNUM, 30) + "." + run(ALNUM + "-_", 43)]


def plant(tree: Path, rng: random.Random) -> Dict[str, List[str]]:
    """Into every pod template, pod and DGD of the recording: env values, a credential annotation, token
    arguments (``--hf-token=…``, ``--api-key …``) — distinct values per object. Returns what was planted, by kind."""
    planted: Dict[str, List[str]] = {"env": [], "secret": []}

    def value() -> str:
        return "kd-planted-" + "".join(rng.choice(ALNUM) for _ in range(20))

    def visit(node):
        if isinstance(node, dict):
            if isinstance(node.get("containers"), list):
                for c in node["containers"]:
                    env_value, flag_value, key_value = value(), value(), rng.choice(drawn_tokens(rng))
                    c.setdefault("env", []).append({"name": "PLANTED_ENV", "value": env_value})
                    c["args"] = list(c.get("args") or []) + [f"--hf-token={flag_value}", "--api-key", key_value]
                    planted["env"].append(env_value)
                    planted["secret"] += [flag_value, key_value]
            for v in node.values():
                visit(v)
        elif isinstance(node, list):
            for v in node:
                visit(v)

    for f in tree.glob("resources/**/*.json"):
        doc = json.loads(f.read_text())
        for o in doc["items"]:
            if o["metadata"].get("namespace") and "spec" in o:
                visit(o["spec"])
                secret = value()
                o["metadata"].setdefault("annotations", {})["example.com/api-token"] = secret
                planted["secret"].append(secret)
        f.write_text(json.dumps(doc))
    return planted


def leaks(files: Dict[str, bytes], values: List[str]) -> List[Tuple[str, str]]:
    out = []
    for v in values:
        forms = [v.encode(), base64.b64encode(v.encode()), base64.b64encode(v.encode()).rstrip(b"=")]
        out += [(f, v) for f, data in files.items() for form in forms if form in data]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_no_planted_value_in_clear_or_base64_unless_include_env(seed, tmp_path):
    rng = random.Random(seed)
    state = rng.choice([s for s in STATES if len(dgds_of(s)) > 1])
    namespace, name = rng.choice(dgds_of(state))
    tree = tmp_path / "state"
    shutil.copytree(RECORDED / state, tree)
    planted = plant(tree, rng)
    logged = drawn_tokens(rng)

    def lines(ns, pod, container):  # every log line carries a token, in clear or base64, as programs print them
        return [f"Authorization: Bearer {logged[4]}", f"HF_TOKEN={logged[0]} starting", f"key {logged[1]}",
                f"aws {logged[2]} " + base64.b64encode(f"token={logged[3]}".encode()).decode(), "plain line"]

    summary, files, _ = collect(Logs(str(tree), namespace, lines), tmp_path, name)
    assert leaks(files, planted["env"] + planted["secret"] + logged) == []
    assert summary["redacted"]["env values"] >= 1 and summary["includeEnv"] is False
    logs = [data.decode() for f, data in files.items() if f.startswith("pods/") and f.endswith(".log")]
    assert logs and all("plain line" in text and "REDACTED" in text for text in logs)
    # env names and valueFrom references stay (doctor and tree read them)
    pods = [o for o in objects(files) if o["metadata"].get("namespace") == namespace and "containers" in (o.get("spec") or {})]
    env = [e for p in pods for c in p["spec"]["containers"] for e in c.get("env") or []]
    assert any(e["name"] == "PLANTED_ENV" and e["value"] == "REDACTED" for e in env)
    assert all("valueFrom" in e for e in env if "value" not in e)
    # --include-env keeps env values (only them: flags and token shapes stay redacted)
    _, kept, _ = collect(Logs(str(tree), namespace, lines), tmp_path, name, include_env=True)
    assert leaks(kept, planted["env"]) != []
    assert leaks(kept, planted["secret"] + logged) == []


def test_redactor_keeps_what_is_not_a_secret():
    r = Redactor()
    for kept in ('secret "mpi-run-ssh-secret" not found', "sshSecretName: mpi-run-ssh-secret",
                 "--hf-token $(HF_TOKEN)", "Authentication failed", "token refresh ok", "--model Qwen/Qwen3-0.6B"):
        assert r.text(kept) == kept
    assert r.args(["--api-key", "$(KEY)", "--model", "m"]) == ["--api-key", "$(KEY)", "--model", "m"]
    assert r.counts == {}


# -- scope, caps, formats --------------------------------------------------------------------------------------

STATE = "grove-healthy"  # three DGDs in namespace llm


def test_wider_scopes_are_explicit_and_hold_the_neighbours(tmp_path):
    path = str(RECORDED / STATE)
    names = [n for _, n in dgds_of(STATE)]
    with pytest.raises(UsageError, match="widen the scope"):
        run_collect(Logs(path, "llm"), tty_env(False), name=None, all_namespaces=False, output=str(tmp_path / "x.tar.gz"))
    with pytest.raises(UsageError, match="contradicts"):
        run_collect(Logs(path, "llm"), tty_env(False), name=None, all_namespaces=True, scope="dgd",
                    output=str(tmp_path / "x.tar.gz"))
    for scope, all_namespaces in (("namespace", False), (None, True)):
        summary, files, out = collect(Logs(path, "llm"), tmp_path, None, scope=scope, all_namespaces=all_namespaces)
        assert summary["scope"]["kind"] == ("namespace" if scope else "cluster")
        assert sorted(o["metadata"]["name"] for o in dgds(files)) == sorted(names)
        found = {f["object"]["name"] for f in run_doctor(RecordedCluster(out), all_namespaces=True).data["findings"]
                 if f["object"]["kind"] == "DynamoGraphDeployment"}
        assert found <= set(names)
    text = run_collect(Logs(path, "llm"), tty_env(False), name="vllm-mn", all_namespaces=False,
                       output=str(tmp_path / "t.tar.gz"))
    assert "scope DGD llm/vllm-mn" in text.table(text.data, False, False)


def test_doctor_from_a_dgds_bundle_refuses_what_it_did_not_collect(tmp_path):
    from tests.conftest import run_cli
    from tests.unit.test_contracts import cli_json

    _, _, out = collect(Logs(str(RECORDED / STATE), "llm"), tmp_path, "vllm-mn")
    other = run_cli("doctor", "--from", out, "sglang-mn")
    assert other.returncode == 2 and "holds DGD llm/vllm-mn only" in other.stderr and "sglang-mn" in other.stderr
    assert run_cli("doctor", "--from", out, "-n", "prod").returncode == 2
    ok = run_cli("doctor", "--from", out, "-o", "json")
    skipped = {s["check"]: s["reason"] for s in json.loads(ok.stdout)["skipped"]}
    assert "DGD llm/vllm-mn only" in skipped["other DGDs and namespaces"]
    listing = run_cli("doctor", "--from", out, "--list", "-o", "json")
    doc = json.loads(listing.stdout)
    assert listing.returncode == 0 and doc["scope"]["dgd"] == "vllm-mn" and doc["collectFormat"] == 2
    assert all(f["check"] == "ok" for f in doc["files"]) and doc["counts"]["dynamographdeployments.nvidia.com"] == 1
    from tests.unit.test_contracts import problems

    assert problems("bundle-list", doc) == []
    assert cli_json  # the contracts' helper is importable beside problems


def tampered(out: str, tmp_path, change) -> str:
    files = members(out)
    change(files)
    new = tmp_path / "t.tar.gz"
    with tarfile.open(new, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo("b/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(new)


def test_list_says_a_modified_file_and_formats_are_read_or_refused(tmp_path):
    from tests.conftest import run_cli

    _, _, out = collect(Logs(str(RECORDED / STATE), "llm"), tmp_path, "vllm-mn")
    edited = tampered(out, tmp_path, lambda f: f.__setitem__("doctor.json", f["doctor.json"] + b" "))
    listing = run_cli("doctor", "--from", edited, "--list")
    assert listing.returncode == 1 and re.search(r"MODIFIED\s+\d+\s+\w+\s+doctor.json", listing.stdout)

    def version(n):
        def change(f):
            doc = json.loads(f["collect.json"])
            doc["formatVersion"] = n
            f["collect.json"] = json.dumps(doc).encode()
        return change

    newer = run_cli("doctor", "--from", tampered(out, tmp_path, version(3)))
    assert newer.returncode == 2 and "collect format 3" in newer.stderr and "upgrade" in newer.stderr
    older = run_cli("doctor", "--from", tampered(out, tmp_path, version(1)), "--list")
    assert "older kubectl-dynamo (collect format 1)" in older.stdout
    from kubectl_dynamo.commands.bundle import collect_format

    with pytest.raises(InputError):
        collect_format(RecordedCluster(tampered(out, tmp_path, version(None))))


def test_caps_bound_logs_and_fan_out_and_say_so(tmp_path):
    path = str(RECORDED / STATE)
    many = Logs(path, "llm", lambda ns, pod, c: [f"line {i}" for i in range(50)])
    limits = Limits(log_lines=10, max_pods=2)
    summary, files, _ = collect(many, tmp_path, "vllm-mn", limits=limits)
    logs = {f: d.decode().splitlines() for f, d in files.items() if f.startswith("pods/") and f.endswith(".log")}
    assert logs and all(lines[0].startswith("# kubectl-dynamo collect: truncated") and lines[1:] ==
                        [f"line {i}" for i in range(40, 50)] for lines in logs.values())
    assert len({f.split("/")[2] for f in logs}) == 2  # --max-pods: two pods' logs, the third listed as left out
    assert any("over --max-pods 2" in u["reason"] for u in summary["unavailable"])
    manifest = json.loads(files["collect.json"])
    assert sorted(manifest["truncated"]) == sorted(logs) and summary["truncated"] == len(logs)
    small, files, _ = collect(many, tmp_path, "vllm-mn", limits=Limits(max_bytes=1))
    assert not any(f.endswith(".log") and f.startswith("pods/") for f in files)
    assert any("--max-bytes 1" in u["reason"] for u in small["unavailable"])


def test_dry_run_lists_and_writes_nothing(tmp_path):
    out = tmp_path / "never.tar.gz"
    result = run_collect(Logs(str(RECORDED / STATE), "llm"), tty_env(False), name="vllm-mn", all_namespaces=False,
                         output=str(out), dry_run=True)
    text = result.table(result.data, False, False)
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert "scope DGD llm/vllm-mn" in text and "dry run" in text and "sglang-mn" not in text
    assert result.data["objects"]["dynamographdeployments.nvidia.com"] == 1


def test_controller_logs_keep_only_the_lines_about_the_scope(tmp_path):
    def lines(ns, pod, container):
        return ['reconciling DynamoGraphDeployment {"name": "vllm-mn", "namespace": "llm"}',
                'reconciling DynamoGraphDeployment {"name": "sglang-mn", "namespace": "llm"}',
                "Starting workers"]

    _, files, _ = collect(Logs(str(RECORDED / STATE), "llm", lines), tmp_path, "vllm-mn")
    ctl = [d.decode() for f, d in files.items() if f.startswith("controllers/")]
    assert ctl and all(text.splitlines() == [lines("", "", "")[0]] for text in ctl)
