"""Bad input never crashes, never hangs, never eats memory (issue #12).

Every reproduced failure class is a case here: the hand-written corpus in tests/data/bad-input/
(each file's first line gives the expected exit codes), inputs that cannot be files in a
repository (FIFOs, devices, 50 MB, stdin bytes), and a fast seeded subset of the mutation fuzzer
(tests/fuzz/; the full run is scripts/fuzz). The property (tests/fuzz/property.py): exit code in
{0, 1, 2}, one ``error:`` line when non-zero, no internal error, no traceback, bounded time and RSS.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time

import pytest

from kubectl_dynamo.cli import main
from tests.conftest import CORPUS_DIR, REPO
from tests.fuzz import badinput, mutate
from tests.fuzz.property import violation
from tests.fuzz.runner import run_forked

COMMANDS = {"explain": ["explain", "dgd", "-f", "{file}"], "upgrade": ["upgrade", "dgd", "-f", "{file}"]}


def run_in_process(argv, stdin: bytes = b""):
    """main() as the console entry point runs it, with real byte streams; (code, stdout, stderr, s)."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    start = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start


def cli(*args, input: bytes = b"", timeout: float = 60, env=None):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kubectl_dynamo", *args], input=input, capture_output=True,
                          timeout=timeout, cwd=REPO, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), time.monotonic() - start


def assert_one_error(code, stderr, expected_code, *words):
    assert code == expected_code, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for w in words:
        assert w in lines[0], lines[0]


# -- the hand-written corpus -------------------------------------------------------------------
@pytest.mark.parametrize("path", badinput.files(), ids=lambda p: p.name)
def test_bad_input_corpus(path):
    expected = badinput.expected(path)
    assert set(expected) == set(COMMANDS), path.name
    for command, argv in COMMANDS.items():
        code, out, err, seconds = run_in_process([a.replace("{file}", str(path)) for a in argv])
        assert violation(code, err, seconds, time_limit=5) is None, (command, code, err)
        assert code == expected[command], (command, err, out[-500:])
        if code == 1 and command == "explain":  # findings, never an exception: the path is named
            assert "spec" in out or "metadata" in out


def test_without_libyaml_the_input_layer_answers_the_same(monkeypatch):
    """The pure-Python parser (PyYAML built without libyaml) is the fallback of the C one: the same
    documents, or the same error line, for every bad-input and corpus file."""
    import yaml

    from kubectl_dynamo.errors import InputError
    from kubectl_dynamo.inputs import manifests

    def outcome(path):
        try:
            return [d.data for d in manifests.load(str(path))]
        except InputError as e:
            return str(e)

    paths = badinput.files() + sorted(CORPUS_DIR.rglob("*.yaml"))
    with_libyaml = [outcome(p) for p in paths]
    monkeypatch.delattr(yaml.cyaml, "CParser")
    manifests._loader_class.cache_clear()
    try:
        assert "PyParser" in [c.__name__ for c in manifests._loader_class().__mro__]
        assert [outcome(p) for p in paths] == with_libyaml
    finally:
        manifests._loader_class.cache_clear()


def test_corpus_has_every_reproduced_case():
    names = {p.stem for p in badinput.files()}
    for case in ("alias-bomb", "spec-list", "spec-null", "components-int", "components-null", "env-without-name",
                 "gpu-inf", "nodecount-5000-digits", "mount-without-name", "alpha-args-string", "tag-int-abc",
                 "tag-bool-maybe", "tag-timestamp-nope", "tag-python", "not-utf8", "nul", "name-invalid",
                 "namespace-upper", "grove-annotation-bool", "label-key-long", "component-duplicate", "image-space"):
        assert case in names


def test_wrong_types_are_findings_naming_the_path():
    for name, path in (("spec-list", "spec"), ("components-int", "spec.components"),
                       ("env-without-name", "env[0]"), ("gpu-inf", "nvidia.com/gpu"),
                       ("nodecount-huge", "multinode.nodeCount"), ("mount-without-name", "volumeMounts[0]"),
                       ("alpha-args-string", "mainContainer.args"), ("spec-null", "spec.components"),
                       ("components-null", "spec.components")):
        code, out, err, _ = run_in_process(["explain", "dgd", "-f", str(badinput.DIR / f"{name}.yaml"), "-o", "json"])
        import json

        findings = json.loads(out)["findings"]
        assert code == 1 and any(f["code"] == "schema-invalid" and path in f["message"] for f in findings), name


def test_alias_bomb_ends_fast():
    code, err, seconds = cli("explain", "dgd", "-f", str(badinput.DIR / "alias-bomb.yaml"))
    assert_one_error(code, err, 2, "aliases expand")
    assert seconds < 5  # the issue's bound is 1 s of work; a fresh interpreter adds its start-up
    _, _, _, in_process = run_in_process(["explain", "dgd", "-f", str(badinput.DIR / "alias-bomb.yaml")])
    assert in_process < 1


# -- inputs that cannot be files in a repository --------------------------------------------------
def test_stdin_not_utf8_is_a_usage_error():
    code, err, _ = cli("explain", "dgd", "-f", "-", input=b"a: \xff\n")
    assert_one_error(code, err, 2, "<stdin>", "not valid UTF-8")


def test_stdin_control_character_in_upgrade():
    code, err, _ = cli("upgrade", "dgd", "-f", "-", input=b"kind: x\nmetadata: {name: a\x00}\n")
    assert_one_error(code, err, 2, "U+0000")


# YAML 1.1 (yaml.org/spec/1.1, production [1] c-printable): the characters a YAML stream may hold.
C_PRINTABLE = ((0x09, 0x09), (0x0A, 0x0A), (0x0D, 0x0D), (0x20, 0x7E), (0x85, 0x85), (0xA0, 0xD7FF),
               (0xE000, 0xFFFD), (0x10000, 0x10FFFF))


def test_exactly_the_characters_outside_c_printable_are_refused():
    """Every character below U+3000 and each side of every range edge, inside a quoted value."""
    from kubectl_dynamo.errors import InputError
    from kubectl_dynamo.inputs.manifests import parse

    edges = {c + d for lo, hi in C_PRINTABLE for c in (lo, hi) for d in (-1, 0, 1)}
    for code in sorted(set(range(0x3000)) | edges):
        if not 0 <= code <= 0x10FFFF:
            continue
        allowed = any(lo <= code <= hi for lo, hi in C_PRINTABLE)
        try:
            parse(f'a: "x{chr(code)}"\n', "t.yaml")
            refused = False
        except InputError as e:
            refused = f"U+{code:04X} is not allowed in YAML" in str(e)
        assert refused != allowed, hex(code)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused(device):
    code, err, seconds = cli("explain", "dgd", "-f", device)
    assert_one_error(code, err, 2, "not a regular file", "character device")


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for command in ("explain", "upgrade"):
        code, err, seconds = cli(command, "dgd", "-f", str(fifo), timeout=20)  # no writer: open() would block
        assert_one_error(code, err, 2, "a FIFO")


def test_directory_without_manifests_is_one_error(tmp_path):
    (tmp_path / "notes.txt").write_text("x")  # -f DIR reads *.yaml, *.yml, *.json (as kubectl); none here
    code, err, _ = cli("explain", "dgd", "-f", str(tmp_path))
    assert_one_error(code, err, 2, str(tmp_path), "no *.yaml")


def test_size_bound_file_and_stdin_and_raising_it(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:  # a 50 MB one-line flow list
        f.write(b"a: [" + b"1," * 25_000_000 + b"1]\n")
    code, err, seconds = cli("explain", "dgd", "-f", str(big))
    assert_one_error(code, err, 2, "larger than the 4 MiB input limit", "KUBECTL_DYNAMO_MAX_INPUT")
    assert seconds < 10
    with open(big, "rb") as f:
        code, err, _ = cli("explain", "dgd", "-f", "-", input=f.read())
    assert_one_error(code, err, 2, "<stdin>: larger than")
    path = CORPUS_DIR / "v1.0.1" / "examples_backends_vllm_deploy_agg.yaml"
    code, err, _ = cli("explain", "dgd", "-f", str(path), env={"KUBECTL_DYNAMO_MAX_INPUT": "100"})
    assert_one_error(code, err, 2, "larger than the 100 bytes input limit")
    code, err, _ = cli("explain", "dgd", "-f", str(path), env={"KUBECTL_DYNAMO_MAX_INPUT": "64Mi"})
    assert code in (0, 1) and "error" not in err


def test_node_budget_bounds_a_dense_document(tmp_path):
    dense = tmp_path / "dense.yaml"
    dense.write_bytes(b"a: [" + b"1," * 1_000_000 + b"1]\n")  # 2 MB, under the byte limit; a million nodes
    code, err, seconds = cli("explain", "dgd", "-f", str(dense))
    assert_one_error(code, err, 2, "more than 524,288 YAML nodes")
    assert seconds < 15


def test_values_file_goes_through_the_input_layer(tmp_path):
    values = tmp_path / "v.yaml"
    values.write_bytes(b"a: !!python/object:os.system x\n")
    code, err, _ = cli("install", "--orchestrator", "grove", "--dry-run", "--values", str(values))
    assert_one_error(code, err, 2, "--values", "not allowed")


# -- the fast fuzz subset ----------------------------------------------------------------------------
SEED, COUNT = 12, 150


def test_fuzz_subset_in_process():
    """Seeded mutants of the real corpus through explain and upgrade (in-process, for speed)."""
    commands = (["explain", "dgd", "-f", "-"], ["upgrade", "dgd", "-f", "-"],
                ["upgrade", "dgd", "-f", "-", "--role-templates", "--topology-aliases"])
    good = (REPO / "tests" / "data" / "upgrade" / "commented-v1alpha1.yaml").read_bytes()
    for argv in commands:  # the command lines themselves are valid
        assert run_in_process(argv, good)[0] in (0, 1), argv
    bad, codes = [], {}
    for name, data in mutate.cases(CORPUS_DIR, SEED, COUNT):
        for argv in commands:
            code, _, err, seconds = run_in_process(argv, data)
            command = " ".join(argv[:1] + argv[4:])
            codes[code] = codes.get(code, 0) + 1
            why = violation(code, err, seconds, time_limit=10)
            if why:
                bad.append(f"{why}: {command} {name}: {err.strip()[-300:]}")
    assert not bad, "\n".join(bad[:20])
    assert codes.get(2) and codes.get(1)  # the mutants reach both the input layer and the checks


def test_fuzz_sample_in_child_processes():
    """A sample in forked children: real exit codes, peak RSS and wall time per run."""
    sample = list(mutate.cases(CORPUS_DIR, SEED + 1, 12)) + [
        ("alias bomb", (badinput.DIR / "alias-bomb.yaml").read_bytes()),
        ("deep", b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n")]
    for name, data in sample:
        out = run_forked(["explain", "dgd", "-f", "-"], data, time_limit=30, memory_mb=2048)
        assert violation(out.code, out.stderr, out.seconds, out.rss_mb, time_limit=20, memory_mb=500) is None, \
            (name, out)


def test_install_dry_run_needs_no_helm(tmp_path):
    """A dry run only reads the cluster and prints the plan; helm runs only to change it. Without a
    cluster it ends at the cluster check (exit 3), not at "helm not found" (exit 2)."""
    from tests.unit.test_client import kubeconfig

    config = kubeconfig(tmp_path, "http://127.0.0.1:9")  # discard port: nothing listens
    env = {"PATH": os.path.dirname(sys.executable)}  # no helm on PATH
    code, err, _ = cli("install", "--orchestrator", "grove", "--dry-run", "--kubeconfig", config, env=env)
    assert_one_error(code, err, 3, "cannot reach the cluster")
    code, err, _ = cli("install", "--orchestrator", "grove", "--yes", "--kubeconfig", config, env=env)
    assert_one_error(code, err, 2, "helm not found")
