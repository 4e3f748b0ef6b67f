"""Bounds (issue 19, part 5): an input the API server could never store is refused at once, no
input within the limits takes over 5 s, no number is an internal error, a null key is a YAML error.

Times are CPU seconds of the test process (``time.process_time``), so a busy machine does not make
them flaky; the limits are the issue's (1 s to refuse, 5 s within the limits).
"""

from __future__ import annotations

import json
import time

import pytest

from kubectl_dynamo.inputs.manifests import MAX_OBJECT_BYTES
from tests.unit.test_bad_input import run_in_process

HEAD = "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\nspec:\n  components:\n"


def _component(i: int, gpus: str = '"1"') -> str:
    return (f"  - {{name: w{i}, type: worker, podTemplate: {{spec: {{containers: [{{name: main, "
            f"image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1', command: [python3, -m, dynamo.vllm], "
            f"args: [--model, m], resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]}}}}}}\n")


def _explain(text: str, *extra: str):
    start = time.process_time()
    code, out, err, _ = run_in_process(["explain", "dgd", "-f", "-", "-o", "json", *extra], stdin=text.encode())
    return code, out, err, time.process_time() - start


def test_a_document_above_etcds_limit_is_refused_at_once():
    text = HEAD.replace("{name: g}", "{name: g, annotations: {big: '" + "a" * MAX_OBJECT_BYTES + "'}}") + _component(0)
    code, _, err, seconds = _explain(text)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and "1.5 MiB" in err, err
    assert seconds < 1.0


def test_a_stream_of_objects_each_within_the_limit_is_read():
    doc = HEAD + _component(0)
    small = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: '" + "a" * (MAX_OBJECT_BYTES // 2) + "'}\n"
    code, _, err, _ = _explain(doc + small + small)
    assert code in (0, 1), err


def test_ten_thousand_components_are_refused_within_five_seconds():
    # the CRD allows 25 components; a 1 MB DGD with 10,000 is within etcd's limit and must not be simulated
    text = HEAD + "".join(f"  - {{name: w{i}, type: worker, podTemplate: {{spec: {{containers: [{{name: main, "
                          "image: 'x:1.0.0'}]}}}\n" for i in range(10_000))
    assert len(text) < MAX_OBJECT_BYTES
    code, out, err, seconds = _explain(text)
    assert code == 1, err
    assert any("more than the 25 allowed" in f["message"] for f in json.loads(out)["findings"])
    assert seconds < 5.0


def test_a_large_component_within_the_limits_takes_under_five_seconds():
    envs = "".join(f"          - {{name: E{i}, value: v{i}}}\n" for i in range(20_000))
    text = (HEAD + "  - name: w\n    type: worker\n    podTemplate:\n      spec:\n        containers:\n"
            "        - name: main\n          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1\n          env:\n" + envs)
    assert len(text) < MAX_OBJECT_BYTES
    code, _, err, seconds = _explain(text)
    assert code in (0, 1) and seconds < 5.0, err


@pytest.mark.parametrize("gpus", ["123456789012345678901234567890", '"123456789012345678901234567890"', '"1e30"',
                                  '"12e45678"', '"1e999999999"', "1e30", "-1", '"-1"', "0.5", '"0.5"', ".inf",
                                  '"9223372036854775807"', "9223372036854775808", "2147483648"])
def test_no_number_is_an_internal_error(gpus):
    code, _, err, _ = _explain(HEAD + _component(0, gpus).replace("type: worker", "type: worker, multinode: {nodeCount: 2}"))
    assert code in (0, 1, 2) and "internal error" not in err, err


@pytest.mark.parametrize("key", ["~", "null", "Null", "? "])
def test_a_null_map_key_is_a_yaml_error(key):
    # sigs.k8s.io/yaml refuses it: "unsupported map key of type: <nil>" (tests/data/yaml/PROVENANCE.md)
    text = HEAD.replace("{name: g}", f"{{name: g, labels: {{{key}: a}}}}") + _component(0)
    code, _, err, _ = _explain(text)
    assert code == 2 and err.startswith("error: ") and "null" in err and err.count("\n") == 1, err


def _v1alpha1_with_args(n: int) -> str:
    args = "".join(f"          - a{i % 10}\n" for i in range(n))
    return ("apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: big\nspec:\n"
            "  services:\n    VllmWorker:\n      componentType: worker\n      extraPodSpec:\n        mainContainer:\n"
            "          image: x\n          command: [python3]\n          args:\n" + args)


def test_upgrade_write_of_a_hundred_thousand_args_within_twenty_seconds(tmp_path):
    # ruamel's round trip costs ~0.2 ms per node: it took ~25 CPU s for this DGD before upgrade read and
    # wrote long runs of one-word items apart (commands/upgrade.py load_rt, dump_rt)
    text = _v1alpha1_with_args(100_000)
    assert len(text.encode()) < MAX_OBJECT_BYTES
    f = tmp_path / "big.yaml"
    f.write_text(text)
    start = time.process_time()
    code, _, err, _ = run_in_process(["upgrade", "dgd", "-f", str(f), "--write"])
    seconds = time.process_time() - start
    assert code == 0, err
    written = f.read_text()
    assert written.startswith("apiVersion: nvidia.com/v1beta1") and written.count("\n          - a") == 100_000
    assert seconds < 20.0, seconds
