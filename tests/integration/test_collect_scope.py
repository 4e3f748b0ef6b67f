"""``collect`` on the real control plane holds what was asked, and nothing private.

Three DGDs on the sandbox: ``kd-alpha`` (the one collected, with a fault doctor must find offline) and its neighbour
``kd-bravo`` in namespace kd-scope-one, ``kd-charlie`` in kd-scope-two. Each has env values, a Secret, a credential
annotation, token arguments (``--hf-token=…``, ``--api-key …``) and token-shaped log lines (in clear and base64)
planted, all distinct; kd-alpha and kd-bravo each mount a model-cache claim (bound by the real PV controller to a
PersistentVolume of a StorageClass) that a download Job mounts too. Faked because they cannot run here (and
said so): the images (kwok serves each pod's log from a file, kwok v0.8.0 ``pkg/kwok/server/debugging_logs.go``),
and the Grove controller (the test creates what Grove would, as tests/integration/test_daily.py does).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import tarfile

import pytest

from tests.conftest import run_cli
from tests.integration import scenarios as s
from tests.integration import world as w

pytestmark = pytest.mark.fullcluster

NS1, NS2 = "kd-scope-one", "kd-scope-two"
DGDS = {"kd-alpha": NS1, "kd-bravo": NS1, "kd-charlie": NS2}
OTHER_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0"
CLASS = "kd-scope-manual"


def drawn(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


class Planted:
    def __init__(self):
        self.env = {d: drawn(f"kd-env-{d}-") for d in DGDS}  # in clear only without --include-env
        self.private = {d: [drawn(f"kd-flag-{d}-"), drawn(f"kd-key-{d}-"), drawn(f"kd-ann-{d}-"),
                            drawn(f"kd-secret-{d}-"), "hf_" + secrets.token_hex(17),
                            "nvapi-" + secrets.token_urlsafe(40).replace("-", "x")] for d in DGDS}

    def every(self):
        return [v for d in DGDS for v in [self.env[d], *self.private[d]]]


def members(path):
    with tarfile.open(path) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def leaks(files, values):
    out = []
    for v in values:
        forms = (v.encode(), base64.b64encode(v.encode()), base64.b64encode(v.encode()).rstrip(b"="))
        out += [(f, v) for f, data in files.items() for form in forms if form in data or v in f]
    return out


def mentions(files, name):
    word = re.compile(rb"(?<![A-Za-z0-9-])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9])")
    return sorted(f for f, data in files.items() if word.search(data) or name in f)


def cli(sandbox, *args, timeout=300):
    return run_cli(*args, "--kubeconfig", str(sandbox.kubeconfig), timeout=timeout)


@pytest.fixture(scope="module")
def state(sandbox, tmp_path_factory):
    world = w.World(sandbox)
    world.clear_objects()
    world.ensure(["grove", "kai", "dynamo"])
    files = tmp_path_factory.mktemp("scope-logs")
    planted = Planted()
    ctl = files / "controller.log"
    ctl.write_text("".join(s.cri_line(f"2026-12-01T08:59:0{i}Z", f'reconciling DynamoGraphDeployment '
                                       f'{{"name": "{d}", "namespace": "{ns}"}}') for i, (d, ns) in enumerate(DGDS.items())))
    world.apply(w.controllers("grove", "v0.1.0-alpha.15") + w.controllers("kai") + w.kai_queues()
                + w.dynamo_operator(version=s.OPERATOR_VERSION, grove=True, kai=True))
    world.apply([{"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs", "metadata": {"name": "kd-scope"},
                  "spec": {"selector": {"matchNamespaces": ["grove-system", "kai-scheduler", "dynamo-system"]},
                           "logs": [{"logsFile": str(ctl)}]}}])
    world.wait_available()
    sandbox.kubectl("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": CLASS},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "Immediate"}))
    docs = []
    for dgd, ns in DGDS.items():
        flag, key, ann, secret_value, hf, ngc = planted.private[dgd]
        doc = s.dgd(dgd, ns, "vllm", nodes=3, gpus=1, annotations={"example.com/api-token": ann},
                    extra_args=(f"--hf-token={flag}", "--api-key", key))
        doc["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["env"] = [
            {"name": "PLANTED_ENV", "value": planted.env[dgd]}]
        claim = f"{dgd}-model-cache" if ns == NS1 else None

        def mutate(pods, dgd=dgd, claim=claim):
            if dgd != "kd-bravo":
                pods[2]["spec"]["containers"][0]["image"] = OTHER_IMAGE  # the fault doctor finds
            for p in pods:
                c = p["spec"]["containers"][0]
                if not any(e.get("name") == "PLANTED_ENV" for e in c.get("env") or []):  # rendered from the DGD
                    c.setdefault("env", []).append({"name": "PLANTED_ENV", "value": planted.env[dgd]})
                c.setdefault("envFrom", []).append({"secretRef": {"name": f"{dgd}-hf-token"}})
                if claim:
                    p["spec"].setdefault("volumes", []).append({"name": "model", "persistentVolumeClaim":
                                                                {"claimName": claim}})
                    c.setdefault("volumeMounts", []).append({"name": "model", "mountPath": "/models"})

        objs = s.group_objects(doc, mutate=mutate)
        pods = [o for o in objs if o["kind"] == "Pod"]
        log = files / f"{dgd}.log"
        log.write_text("".join(s.cri_line(f"2026-12-01T09:00:0{i}Z", line) for i, line in enumerate([
            f"{dgd} serving", f"using HF token {hf}", f"NGC_API_KEY={ngc}",
            "config " + base64.b64encode(f"token={hf}".encode()).decode()])))
        extra = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{dgd}-hf-token", "namespace": ns},
                  "type": "Opaque", "stringData": {"HF_TOKEN": secret_value}}]
        if claim:
            extra += [
                {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"kd-scope-pv-{dgd}"},
                 "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
                          "storageClassName": CLASS, "hostPath": {"path": f"/tmp/kd-scope-{dgd}"}}},
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": ns},
                 "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": CLASS,
                          "volumeName": f"kd-scope-pv-{dgd}", "resources": {"requests": {"storage": "1Gi"}}}},
                {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"{dgd}-download", "namespace": ns},
                 "spec": {"backoffLimit": 0, "template": {"spec": {
                     "restartPolicy": "Never", "tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "download", "image": "python:3.12",
                                     "args": ["download", f"--hf-token={flag}"],
                                     "env": [{"name": "HF_TOKEN", "value": planted.env[dgd]}],
                                     "volumeMounts": [{"name": "model", "mountPath": "/models"}]}],
                     "volumes": [{"name": "model", "persistentVolumeClaim": {"claimName": claim}}]}}}}]
        docs.append((ns, doc, objs, pods, extra, log))
    for ns, doc, objs, pods, extra, log in docs:
        sandbox.kubectl("apply", "-f", "-", input=json.dumps(objs[0]))  # the namespace first
        sandbox.kubectl("apply", "--server-side", "-f", "-", input="\n---\n".join(json.dumps(o) for o in [
            *[s.kwok_logs(p["metadata"]["name"], ns, log, other=log) for p in pods], *extra,
            *s.grove_objects(doc, pods), *objs[1:]]))
    for ns in (NS1, NS2):
        sandbox.kubectl("-n", ns, "wait", "--for=condition=Ready", "pod", "-l",
                        "nvidia.com/dynamo-graph-deployment-name", "--timeout=180s")
    sandbox.kubectl("-n", NS1, "wait", "--for=jsonpath={.status.phase}=Bound", "pvc", "--all", "--timeout=120s")
    yield planted
    world.clear_objects()
    sandbox.kubectl("delete", "clusterlogs.kwok.x-k8s.io", "kd-scope", "--ignore-not-found", check=False)
    for ns in (NS1, NS2):
        sandbox.kubectl("delete", "namespace", ns, "--wait=false", check=False)
    sandbox.kubectl("delete", "pv", "kd-scope-pv-kd-alpha", "kd-scope-pv-kd-bravo", "--ignore-not-found", "--wait=false",
                    check=False)
    sandbox.kubectl("delete", "storageclass", CLASS, "--ignore-not-found", check=False)


def test_a_dgds_bundle_holds_it_only_and_nothing_private(sandbox, state, tmp_path):
    bundle = tmp_path / "kd-alpha.tar.gz"
    proc = cli(sandbox, "collect", "kd-alpha", "-n", NS1, "-o", str(bundle))
    assert proc.returncode == 0, proc.stderr
    assert f"scope DGD {NS1}/kd-alpha" in proc.stdout.splitlines()[0]
    files = members(bundle)
    # nothing of the other namespace, nothing of the neighbour
    assert mentions(files, NS2) == [] and mentions(files, "kd-charlie") == [] and mentions(files, "kd-bravo") == []
    # no planted value in clear or base64: env values, secrets, flags, annotations, log tokens of every DGD
    assert leaks(files, state.every()) == []
    assert any(f.startswith(f"pods/{NS1}/") and f.endswith("main.log") and b"kd-alpha serving" in data
               for f, data in files.items())
    # the model path: the claim, its volume and class, the download Job that mounts it (issue 41)
    def names(path):
        return sorted(o["metadata"]["name"] for o in json.loads(files[path])["items"])
    assert names("resources/core/v1/persistentvolumeclaims.json") == ["kd-alpha-model-cache"]
    assert names("resources/core/v1/persistentvolumes.json") == ["kd-scope-pv-kd-alpha"]
    assert names("resources/storage.k8s.io/v1/storageclasses.json") == [CLASS]
    assert names("resources/batch/v1/jobs.json") == ["kd-alpha-download"]
    assert "kd-alpha-hf-token" in names("resources/core/v1/secrets.json")
    # the controllers' lines about kd-alpha only
    ctl = [data.decode() for f, data in files.items() if f.startswith("controllers/dynamo-system/")]
    assert ctl and all(text.strip().endswith(f'"name": "kd-alpha", "namespace": "{NS1}"}}') for text in ctl)
    # manifest.json lists every other file with its size and sha256, and what was redacted
    manifest = json.loads(files["manifest.json"])
    assert manifest["scope"] == {"kind": "dgd", "namespace": NS1, "dgd": "kd-alpha"}
    listed = {f["path"]: f for f in manifest["files"]}
    assert set(listed) == set(files) - {"manifest.json"}
    assert all(hashlib.sha256(files[p]).hexdigest() == f["sha256"] and f["bytes"] == len(files[p])
               for p, f in listed.items())
    assert manifest["bundle"]["redacted"]["env values"] >= 3
    # doctor --from diagnoses kd-alpha only, as doctor does live
    live = cli(sandbox, "doctor", "kd-alpha", "-n", NS1, "-o", "json")
    offline = run_cli("doctor", "--from", str(bundle), "-A", "-o", "json")
    assert offline.returncode == live.returncode == 1, offline.stderr
    found = json.loads(offline.stdout)["findings"]
    assert found == json.loads(live.stdout)["findings"] and "image-mismatch" in {f["code"] for f in found}
    assert {f["object"]["name"] for f in found if f["object"]["kind"] == "DynamoGraphDeployment"} == {"kd-alpha"}
    outside = run_cli("doctor", "--from", str(bundle), "-n", NS2, "kd-charlie")
    assert outside.returncode == 2 and "was not collected" in outside.stderr


def test_an_explicit_wider_scope_includes_the_others(sandbox, state, tmp_path):
    ns_bundle = tmp_path / "ns.tar.gz"
    proc = cli(sandbox, "collect", "--scope", "namespace", "-n", NS1, "-o", str(ns_bundle))
    assert proc.returncode == 0, proc.stderr
    assert f"scope namespace {NS1}" in proc.stdout
    files = members(ns_bundle)
    assert mentions(files, "kd-bravo") and mentions(files, "kd-alpha") and mentions(files, NS2) == []
    assert leaks(files, state.every()) == []
    every = tmp_path / "all.tar.gz"
    proc = cli(sandbox, "collect", "-A", "-o", str(every))
    assert proc.returncode == 0, proc.stderr
    assert "scope cluster (every namespace)" in proc.stdout
    files = members(every)
    assert mentions(files, "kd-charlie") and mentions(files, NS2) and leaks(files, state.every()) == []
    found = json.loads(run_cli("doctor", "--from", str(every), "-o", "json").stdout)["findings"]
    assert {"kd-alpha", "kd-charlie"} <= {f["object"]["name"] for f in found}
    plan = cli(sandbox, "collect", "kd-alpha", "-n", NS1, "--dry-run")
    assert plan.returncode == 0 and "kd-bravo" not in plan.stdout and f"{NS1}/kd-alpha-" in plan.stdout
    kept = tmp_path / "env.tar.gz"
    assert cli(sandbox, "collect", "kd-alpha", "-n", NS1, "-o", str(kept), "--include-env").returncode == 0
    assert leaks(members(kept), [state.env["kd-alpha"]]) != []  # --include-env opts back in, for env only
    assert leaks(members(kept), state.private["kd-alpha"]) == []


def test_an_anonymized_bundle_has_no_real_name_and_the_same_causes(sandbox, state, tmp_path):
    bundle = tmp_path / "anon.tar.gz"
    proc = cli(sandbox, "collect", "kd-alpha", "-n", NS1, "-o", str(bundle), "--anonymize")
    assert proc.returncode == 0, proc.stderr
    mapping = json.loads((tmp_path / "anon.names.json").read_text())["pseudonym"]
    files = members(bundle)
    nodes = [n for n in mapping.values() if n.startswith("gpu-node-")]
    assert nodes and NS1 in mapping.values() and "kd-alpha" in mapping.values()
    for real in [NS1, "kd-alpha", *nodes]:
        assert mentions(files, real) == [], real
    assert leaks(files, state.every()) == []
    live = json.loads(cli(sandbox, "doctor", "kd-alpha", "-n", NS1, "-o", "json").stdout)["findings"]
    offline = run_cli("doctor", "--from", str(bundle), "-o", "json")
    assert offline.returncode == 1, offline.stderr
    assert sorted((f["code"], f["severity"]) for f in json.loads(offline.stdout)["findings"]) == \
        sorted((f["code"], f["severity"]) for f in live)
