"""`upgrade dgd`: the whole upstream corpus upgrades to valid v1beta1 that the operator renders
identically; comments and untouched documents survive; the optional 1.6 rewrites; the CLI's
output modes and its refusal to lose anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dynamo.cli import PROG, cli
from kubectl_dynamo.commands import upgrade as up
from kubectl_dynamo.errors import DynamoError
from kubectl_dynamo.operator import api
from kubectl_dynamo.operator.render import explain_dgd
from kubectl_dynamo.validation.schema import schema_errors
from tests.conftest import run_cli

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "corpus"
DATA = Path(__file__).resolve().parents[1] / "data" / "upgrade"
FILES = sorted(CORPUS.glob("v1.0.1/*.yaml"))


def plain_docs(text):
    return [d for d in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d]


def pods(doc, untyped=()):
    """Rendered pod specs; for ``untyped`` components without DYN_COMPONENT (see below)."""
    report = explain_dgd(doc)
    out = {(c["name"], r["name"]): r["podSpec"] for c in report["components"] for r in c["roles"]}
    for (comp, _), spec in out.items():
        if comp in untyped:
            for c in spec["containers"]:
                c["env"] = [e for e in c.get("env", []) if e["name"] != "DYN_COMPONENT"]
    return out


def untyped_components(doc):
    """v1alpha1 componentType values v1beta1's enum rejects (default, main): the operator keeps them
    when converting a stored object (DYN_COMPONENT=default, goldens/corpus/v1.0.1/
    examples_backends_mocker_deploy_hplanner-mocker-test.json), but a v1beta1 manifest cannot carry
    them, so the upgraded component renders without DYN_COMPONENT -- with a warning."""
    return {n for n, s in (doc["spec"].get("services") or {}).items()
            if (s or {}).get("componentType") not in (None, *api.COMPONENT_TYPES)}


@pytest.fixture(scope="module")
def corpus():
    """{file name: (original text, Upgraded, unhomed)}: each file parsed and upgraded once (default:
    fields without a v1beta1 home are kept as the operator keeps them).

    ``unhomed`` files are those a strict conversion refuses (a field without a v1beta1 home, e.g.
    spec.pvcs); the cheap plain-dict conversion finds them so ruamel runs once per file.
    """
    from kubectl_dynamo.operator.convert import is_dgd, to_v1beta1

    assert len(FILES) >= 70, f"corpus missing at {CORPUS}"
    out = {}
    for path in FILES:
        text = path.read_text()
        unhomed = any(p["severity"] == "error" for d in plain_docs(text) if is_dgd(d) for p in to_v1beta1(d)[1])
        out[path.name] = (text, up.upgrade_text(text, up.Options()), unhomed)
    return out


def test_corpus_every_v1alpha1_dgd_upgrades_and_renders_the_same(corpus):
    dgds = 0
    for name, (text, result, _) in corpus.items():
        # read as kubectl reads it: a final block scalar keeps its line break even without one at the
        # end of the file (the operator renders the upgrade alike: tests/unit/test_upgrade_oracle.py)
        before, after = plain_docs(text if text.endswith("\n") else text + "\n"), plain_docs(result.text)
        assert len(before) == len(after), name
        for old, new in zip(before, after):
            if not (isinstance(old, dict) and old.get("kind") == "DynamoGraphDeployment"):
                assert new == old, f"{name}: a non-DGD document changed"
                continue
            dgds += 1
            assert old["apiVersion"] == "nvidia.com/v1alpha1" and new["apiVersion"] == "nvidia.com/v1beta1"
            assert schema_errors(new) == [], name
            untyped = untyped_components(old)
            assert pods(old, untyped) == pods(new, untyped), f"{name}: rendered pods differ"
            warned = {p["path"] for d in result.documents for p in d.problems}
            assert all(any(w.endswith(f"{c}.componentType") for w in warned) for c in untyped), name
            if "pvcs" in old["spec"]:  # kept where the operator keeps round-trip data
                assert json.loads(new["metadata"]["annotations"]["nvidia.com/dgd-spec"])["spec"]["pvcs"]
    assert dgds >= 80


def test_corpus_second_upgrade_is_a_no_op(corpus):
    for name, (_, result, _) in corpus.items():
        again = up.upgrade_text(result.text, up.Options(strict=True))
        assert again.text == result.text and not again.changed, name
        assert all(not d.changed and not d.problems for d in again.documents), name


def test_corpus_strict_conversion_refuses_and_names_the_path(corpus):
    unhomed = {n for n, (_, _, f) in corpus.items() if f}
    for name in sorted(unhomed)[:3]:
        with pytest.raises(up.UpgradeError) as err:
            up.upgrade_text(corpus[name][0], up.Options(strict=True))
        assert err.value.problems and all(p["path"] for p in err.value.problems)
    assert "recipes_llama-3-70b_vllm_agg_deploy.yaml" in unhomed  # spec.pvcs
    for name in unhomed:
        result = corpus[name][1]
        warnings = [p for d in result.documents for p in d.problems if p["severity"] == "warning"]
        assert any(p["path"] == "spec.pvcs" for p in warnings), name


# ------------------------------------------------------------------------------ text fidelity

def test_comments_and_untouched_documents_survive():
    text = (DATA / "commented-v1alpha1.yaml").read_text()
    result = up.upgrade_text(text, up.Options())
    out = result.text
    for comment in ("# Team LLM: the 70B engine spanning two nodes.", "# Reviewed in PR #42 -- keep this header.",
                    "# not a DGD: must pass through byte for byte", "# the DGD name", "# our KAI queue",
                    "# shared cache", "# The OpenAI endpoint.", "# becomes type: decode",
                    "# two pods form one TP-16 engine", "# per pod", "# the model"):
        assert comment in out, comment
    config_map = text.split("---\n")[0]
    assert out.startswith(config_map)  # byte for byte, odd spacing included
    assert '"team-llm"' in out and '"16"' in out and '["python3", "-m", "dynamo.vllm"]' in out  # quoting kept
    doc = plain_docs(out)[1]
    assert doc["spec"]["components"][1]["type"] == "decode"
    assert doc["spec"]["components"][1]["sharedMemorySize"] == "16Gi"
    assert schema_errors(doc) == []
    assert pods(plain_docs(text)[1]) == pods(doc)


def test_split_documents_reassembles_exactly():
    for path in FILES[:20] + [DATA / "commented-v1alpha1.yaml"]:
        text = path.read_text()
        assert "".join(p + b for p, b in up.split_documents(text)) == text


def test_indentation_of_the_input_is_kept():
    text = ("apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n    name: four\nspec:\n"
            "    services:\n        worker:\n            componentType: worker\n            extraPodSpec:\n"
            "                mainContainer:\n                    image: img\n                    args:\n"
            "                        - --model\n                        - m\n")
    out = up.upgrade_text(text, up.Options()).text
    assert "\n    name: four\n" in out and "\n    components:\n" in out
    key = next(line for line in out.splitlines() if line.strip() == "args:")
    item = out.splitlines()[out.splitlines().index(key) + 1]
    assert len(item) - len(item.lstrip()) == len(key) - len(key.lstrip()) + 4  # dash indented under its key
    assert plain_docs(out)[0]["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"] == ["--model", "m"]


def test_v1beta1_input_is_returned_byte_for_byte():
    text = (DATA / "lws-topology-v1beta1.yaml").read_text()
    result = up.upgrade_text(text, up.Options())
    assert result.text == text and not result.changed


# ------------------------------------------------------------------------------ nothing dropped in silence

def test_field_without_a_home_is_kept_with_a_warning_or_refused_when_strict():
    text = (CORPUS / "v1.0.1" / "recipes_llama-3-70b_vllm_agg_deploy.yaml").read_text()
    with pytest.raises(up.UpgradeError) as err:
        up.upgrade_text(text, up.Options(strict=True))
    assert "spec.pvcs" in str(err.value) and "--strict" in str(err.value)
    kept = up.upgrade_text(text, up.Options())
    assert any(p["path"] == "spec.pvcs" and p["severity"] == "warning" for d in kept.documents for p in d.problems)
    dgd = next(d for d in plain_docs(kept.text) if d.get("kind") == "DynamoGraphDeployment")
    saved = json.loads(dgd["metadata"]["annotations"]["nvidia.com/dgd-spec"])
    assert saved["spec"]["pvcs"]


# ------------------------------------------------------------------------------ 1.6 rewrites

def test_topology_aliases_lws():
    text = (DATA / "lws-topology-v1beta1.yaml").read_text()
    result = up.upgrade_text(text, up.Options(topology_aliases=True))
    assert "# hand-made topology from the 1.0 days" in result.text
    arg = plain_docs(result.text)[0]["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"][0]
    assert "--dist-init-addr $(DYNAMO_LEADER_ADDRESS):29500" in arg and "--node-rank $DYNAMO_RANK" in arg
    assert "LWS_" not in arg
    assert len(result.diff().splitlines()) < 15  # one line changed, nothing else re-formatted
    report = explain_dgd(plain_docs(result.text)[0])
    assert [f for f in report["findings"] if f["severity"] == "error"] == []


def test_topology_aliases_grove_and_leftovers():
    text = (DATA / "grove-topology-v1beta1.yaml").read_text()
    text += "          - name: PEER\n            value: $(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-wkr-0\n"
    text = text.replace("          resources:\n            limits:\n              nvidia.com/gpu: \"8\"\n", "") + \
        "          resources:\n            limits:\n              nvidia.com/gpu: \"8\"\n"
    result = up.upgrade_text(text, up.Options(topology_aliases=True))
    main = plain_docs(result.text)[0]["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]
    assert "--data-parallel-address $(DYNAMO_LEADER_ADDRESS) --node-rank $(DYNAMO_RANK)" in main["args"][0]
    assert main["env"][0]["value"] == "${DYNAMO_LEADER_ADDRESS}"
    notes = [r for d in result.documents for r in d.rewrites if r.get("note")]
    assert notes and "GROVE_PCSG_NAME" in notes[0]["message"]  # worker host names have no alias


@pytest.mark.parametrize("expr,expected", [
    ("$(LWS_LEADER_ADDRESS)", "$(DYNAMO_LEADER_ADDRESS)"),
    ('"$LWS_LEADER_ADDRESS"', '"$(DYNAMO_LEADER_ADDRESS)"'),
    ("${LWS_WORKER_INDEX}", "${DYNAMO_RANK}"),
    ("$LWS_WORKER_INDEX", "$DYNAMO_RANK"),
    ("$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-my-comp-ldr-0.$(GROVE_HEADLESS_SERVICE)", "$(DYNAMO_LEADER_ADDRESS)"),
    ("$((GROVE_PCLQ_POD_INDEX + 1))", "$(DYNAMO_RANK)"),
    ("$(GROVE_PCSG_POD_INDEX)", "$(DYNAMO_RANK)"),
    ("$LWS_WORKER_INDEXES", "$LWS_WORKER_INDEXES"),  # another variable: untouched
])
def test_alias_forms(expr, expected):
    assert up.alias_string(f"--x {expr} --y") == f"--x {expected} --y"


@pytest.mark.parametrize("name", ["examples_backends_vllm_deploy_disagg-multinode.yaml",
                                  "examples_backends_sglang_deploy_disagg-multinode.yaml",
                                  "examples_backends_trtllm_deploy_disagg-multinode.yaml"])
def test_role_templates_rewrite(name):
    text = (CORPUS / "v1.0.1" / name).read_text()
    result = up.upgrade_text(text, up.Options(role_templates=True))
    dgd = next(d for d in plain_docs(result.text) if d.get("kind") == "DynamoGraphDeployment")
    assert schema_errors(dgd) == []
    report = explain_dgd(dgd)
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    multinode = [c for c in dgd["spec"]["components"] if c.get("multinode")]
    assert multinode
    for comp in multinode:
        assert "podTemplate" not in comp and [r["name"] for r in comp["roles"]] == ["leader", "worker"]
        leader, worker = (r["podTemplate"]["spec"]["containers"][0] for r in comp["roles"])
        line = " ".join(worker["command"] + worker.get("args", []))
        if "vllm" in name:
            assert "--node-rank $(DYNAMO_RANK) --master-addr $(DYNAMO_LEADER_ADDRESS) --headless" in line
        elif "sglang" in name:
            assert "--dist-init-addr $(DYNAMO_LEADER_ADDRESS):29500" in line
        else:
            assert "sshd -D" in line and "Port 2222" in line and "mpirun" in leader["args"][0]


def test_role_templates_need_operator_1_6():
    text = (CORPUS / "v1.0.1" / "examples_backends_vllm_deploy_disagg-multinode.yaml").read_text()
    with pytest.raises(up.UpgradeError, match=">= 1.6.0"):
        up.upgrade_text(text, up.Options(role_templates=True, operator_version="1.5.0"))


def test_old_origin_annotation_is_dropped_when_rewriting():
    text = (DATA / "lws-topology-v1beta1.yaml").read_text().replace(
        '    nvidia.com/enable-grove: "false"\n',
        '    nvidia.com/enable-grove: "false"\n    nvidia.com/dynamo-operator-origin-version: "1.4.0"\n')
    result = up.upgrade_text(text, up.Options(topology_aliases=True))
    assert api.ANN_ORIGIN_VERSION not in result.text
    assert any(r["path"].endswith(api.ANN_ORIGIN_VERSION) for d in result.documents for r in d.rewrites)


# ------------------------------------------------------------------------------ live helpers

def test_authored_version_and_manifest_from_live():
    applied = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
               "metadata": {"name": "x", "namespace": "ns"}, "spec": {"services": {}}}
    live = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "x", "namespace": "ns", "uid": "u", "resourceVersion": "1",
                         "annotations": {up.LAST_APPLIED: json.dumps(applied), api.ANN_ORIGIN_VERSION: "1.4.0"},
                         "managedFields": [{"manager": "kubectl-client-side-apply",
                                            "apiVersion": "nvidia.com/v1alpha1"}]},
            "spec": {"components": []}, "status": {"state": "ready"}}
    assert up.authored_version(live) == "nvidia.com/v1alpha1"
    assert up.manifest_from_live(live) == applied
    del live["metadata"]["annotations"][up.LAST_APPLIED]
    live["metadata"]["managedFields"] = [{"manager": "kubectl", "apiVersion": "nvidia.com/v1beta1"},
                                         {"manager": "dynamo-operator", "apiVersion": "nvidia.com/v1alpha1"}]
    assert up.authored_version(live) == "nvidia.com/v1beta1"
    clean = up.manifest_from_live(live)
    assert "status" not in clean and set(clean["metadata"]) == {"name", "namespace", "annotations"}
    assert up.origin_version(live) == "1.4.0"
    steps = up.recreate_steps("x", "ns")
    assert [s.split()[1] for s in steps] == ["get", "dynamo", "delete", "apply"]


# ------------------------------------------------------------------------------ CLI

def invoke(*args, input=None):
    r = CliRunner().invoke(cli, ["upgrade", "dgd", *args], prog_name=PROG, input=input)
    code = r.exception.exit_code if isinstance(r.exception, DynamoError) else r.exit_code
    return code, r.stdout, r.stderr


def test_cli_stdout_diff_json_and_table(tmp_path):
    src = tmp_path / "dgd.yaml"
    src.write_text((DATA / "commented-v1alpha1.yaml").read_text())
    code, out, _ = invoke("-f", str(src))
    assert code == 0 and out == up.upgrade_text(src.read_text(), up.Options()).text
    code, out, _ = invoke("-f", str(src), "--diff")
    assert code == 0 and out.startswith("--- a/dgd.yaml\n+++ b/dgd.yaml\n")
    assert "-apiVersion: nvidia.com/v1alpha1\n+apiVersion: nvidia.com/v1beta1\n" in out
    code, out, _ = invoke("-f", str(src), "-o", "json")
    assert code == 0 and json.loads(out)["kind"] == "List"
    assert [i["kind"] for i in json.loads(out)["items"]] == ["ConfigMap", "DynamoGraphDeployment"]
    code, out, _ = invoke("-f", str(src), "-o", "table")
    assert code == 0 and "nvidia.com/v1alpha1" in out and "DynamoGraphDeployment" in out
    code, out, _ = invoke("-f", "-", input=src.read_text())
    assert code == 0 and "apiVersion: nvidia.com/v1beta1" in out


def test_cli_write_shows_the_diff_first_keeps_a_backup_and_replaces(tmp_path):
    src = tmp_path / "dgd.yaml"
    original = (DATA / "commented-v1alpha1.yaml").read_text()
    src.write_text(original)
    src.chmod(0o640)
    code, out, err = invoke("-f", str(src), "--write")
    assert code == 0 and out == ""
    assert err.index("--- a/dgd.yaml") < err.index("wrote ")
    assert (tmp_path / "dgd.yaml.bak").read_text() == original
    assert "nvidia.com/v1beta1" in src.read_text() and (src.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dgd.yaml", "dgd.yaml.bak"]
    code, _, err = invoke("-f", str(src), "--write")  # second run: nothing to do
    assert code == 0 and "nothing to change" in err


def test_cli_write_strict_refuses_to_lose_fields_and_writes_nothing(tmp_path):
    src = tmp_path / "recipe.yaml"
    original = (CORPUS / "v1.0.1" / "recipes_llama-3-70b_vllm_agg_deploy.yaml").read_text()
    src.write_text(original)
    proc = run_cli("upgrade", "dgd", "-f", str(src), "--write", "--strict")
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "spec.pvcs" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert src.read_text() == original and not (tmp_path / "recipe.yaml.bak").exists()
    proc = run_cli("upgrade", "dgd", "-f", str(src), "--write")
    assert proc.returncode == 0 and "warning: DynamoGraphDeployment/" in proc.stderr and "spec.pvcs" in proc.stderr


def test_cli_usage_errors(tmp_path):
    assert invoke()[0] == 2
    assert invoke("name", "-f", "x.yaml")[0] == 2
    assert invoke("-f", "-", "--write")[0] == 2
    assert invoke("-f", str(tmp_path / "missing.yaml"))[0] == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: nvidia.com/v1alpha1\nkind: [unclosed\n")
    proc = run_cli("upgrade", "dgd", "-f", str(bad))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
