"""``kubectl dynamo mcp`` through the official MCP SDK client (stdio_client + ClientSession).

One real server subprocess (``python -m kubectl_dynamo mcp``) serves the module; every result is
validated against the output schema the server lists (and the shipped contract) and compared with
the real CLI's ``-o json`` for the same input, run as a user runs it (a subprocess). The cluster
tools are called against the sandbox in tests/integration/test_mcp_live.py; here they meet a
kubeconfig that does not exist and must fail as the CLI does.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

from kubectl_dynamo import contracts
from kubectl_dynamo.mcpserver.tools import BY_NAME, TOOLS, bundled_schema, command_line
from tests.conftest import CORPUS_DIR, DATA, REPO, run_cli
from tests.mcp_client import mcp_server, structured, text_of

pytest.importorskip("mcp")  # the extra kubectl-dynamo[mcp]; the test extra installs it

EXAMPLES = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples").glob("*.yaml"))
CORPUS = sorted(str(p.relative_to(REPO)) for p in CORPUS_DIR.rglob("*.yaml"))
STATES = sorted(str(p.relative_to(REPO)) for p in (DATA / "recorded").iterdir()
                if (p / "manifest.json").is_file())
MISSING_KUBECONFIG = "/nonexistent/kubeconfig"
DRAW = random.Random(38)  # seeded: the same draw every run (each call costs a CLI subprocess to compare with)


def draw_generate_args(rng: random.Random) -> dict:
    """generate's arguments drawn from its own input schema: enums, booleans, small integers."""
    props = BY_NAME["generate"].input_schema()["properties"]
    args = {"name": "drawn", "model": "Qwen/Qwen3-32B"}
    for key in ("backend", "orchestrator", "apiVersion"):
        args[key] = rng.choice(props[key]["enum"])
    for key in ("disaggregated", "frontend", "roleTemplates"):
        args[key] = rng.random() < 0.5
    args["nodes"] = rng.randint(1, 4)
    args["gpusPerNode"] = rng.choice([1, 2, 4, 8])
    return args


def generate_argv(args: dict) -> list:
    flags = {"backend": "--backend", "model": "--model", "orchestrator": "--orchestrator", "apiVersion": "--api-version",
             "nodes": "--nodes", "gpusPerNode": "--gpus-per-node"}
    argv = ["generate", "dgd", args["name"]]
    for key, flag in flags.items():
        argv += [flag, str(args[key])]
    argv += ["--frontend" if args["frontend"] else "--no-frontend"]
    argv += ["--disaggregated"] * args["disaggregated"] + ["--role-templates"] * args["roleTemplates"]
    return argv + ["-o", "json"]


@pytest.fixture(scope="module")
def client():
    with mcp_server("--kubeconfig", MISSING_KUBECONFIG) as c:
        yield c


@pytest.fixture(scope="module")
def listed(client):
    return {t.name: t for t in client.tools()}


def cli_json(*argv: str, input: str | None = None):
    proc = run_cli(*argv, input=input)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def cli_error(*argv: str, input: str | None = None) -> str:
    proc = run_cli(*argv, input=input)
    assert proc.returncode not in (0, 70), proc.stderr
    lines = proc.stderr.rstrip("\n").splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("error: "))  # after a usage line, if any
    return "\n".join(lines[start:])  # a message may go on over lines (generate's nearest valid choices)


def check_result(listed, name: str, result, cli_doc) -> None:
    data = structured(result)
    Draft202012Validator(listed[name].output_schema).validate(data)  # what the client was told
    contracts.validator(BY_NAME[name].schema).validate(data)  # the shipped contract itself
    assert data == cli_doc


# -- what is listed -------------------------------------------------------------------------------
def test_initialize_lists_read_only_tools_with_schemas(client, listed):
    assert client.init.server_info.name == "kubectl-dynamo"
    caps = client.init.capabilities
    assert caps.tools is not None and caps.resources is not None and caps.prompts is not None
    assert set(listed) == {"detect", "explain", "get", "tree", "doctor", "logs", "placement", "rollout_status",
                           "rollout_history", "upgrade", "generate"}
    for name, tool in listed.items():
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["type"] == "object"
        assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
        if name == "logs":
            assert tool.output_schema is None  # text: logs has no -o json
            continue
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object"
        assert "urn:kubectl-dynamo" not in json.dumps(tool.output_schema)  # self-contained
        assert tool.output_schema == bundled_schema(BY_NAME[name].schema)


def test_nothing_that_writes_or_widens_is_exposed(listed):
    """No install, no --write/--file/--dry-run/--exec, no endless streams, no connection flags per call."""
    forbidden = {"write", "file", "force", "dryRun", "exec", "execTimeout", "follow", "watch", "kubeconfig",
                 "context", "cluster", "user", "token", "server", "asUser", "ignoreFile"}
    for tool in listed.values():
        assert not forbidden & set(tool.input_schema["properties"]), tool.name
    argv = [a for t in TOOLS for a in command_line(t, {p.key: _sample(p) for p in t.params})[0]]
    for flag in ("--write", "--file", "--dry-run", "--exec", "--follow", "-f", "--watch", "-w", "install"):
        assert flag not in argv or flag == "--watch=false"


def _sample(param):
    s = param.schema
    if param.kind in ("flag", "pair") or s.get("type") == "boolean":
        return True
    if s.get("type") == "array":
        return ["x"]
    if s.get("type") == "integer":
        return s.get("minimum", 1) or 1
    if "enum" in s:
        return s["enum"][0]
    return "x"


# -- offline tools equal the CLI ------------------------------------------------------------------
@pytest.mark.parametrize("path,as_text", [(p, DRAW.random() < 0.5) for p in EXAMPLES + DRAW.sample(CORPUS, 6)])
def test_explain_equals_cli(client, listed, path, as_text):
    text = (REPO / path).read_text()
    result = client.call("explain", {"manifest": text} if as_text else {"path": path})
    check_result(listed, "explain", result, cli_json("explain", "dgd", "-f", path, "-o", "json"))


def test_explain_example_with_objects_and_diff(client, listed):
    path = EXAMPLES[0]
    result = client.call("explain", {"path": path, "objects": True, "diff": True, "orchestrator": "lws"})
    check_result(listed, "explain", result, cli_json("explain", "dgd", "-f", path, "--objects", "--diff",
                                                     "--orchestrator", "lws", "-o", "json"))


@pytest.mark.parametrize("state,min_severity", [(s, DRAW.choice([None, "warning", "info"]))
                                                 for s in DRAW.sample(STATES, 8)])
def test_doctor_from_bundle_equals_cli(client, listed, state, min_severity):
    args = {"from": state, **({"minSeverity": min_severity} if min_severity else {})}
    result = client.call("doctor", args)
    extra = ["--min-severity", min_severity] if min_severity else []
    check_result(listed, "doctor", result, cli_json("doctor", "--from", state, *extra, "-o", "json"))
    assert result.meta["kubectl-dynamo/exitCode"] == run_cli("doctor", "--from", state, *extra, "-o", "json").returncode


@pytest.mark.parametrize("path,strict", [(p, DRAW.random() < 0.5) for p in EXAMPLES + DRAW.sample(CORPUS, 4)])
def test_upgrade_prints_what_the_cli_prints(client, listed, path, strict):
    result = client.call("upgrade", {"path": path, "strict": strict})
    if result.is_error:  # --strict may refuse: then the same line as the CLI
        assert text_of(result) == cli_error("upgrade", "dgd", "-f", path, "--strict", "-o", "json")
        return
    check_result(listed, "upgrade", result, cli_json("upgrade", "dgd", "-f", path, *(["--strict"] if strict else []),
                                                     "-o", "json"))


@pytest.mark.parametrize("args", [draw_generate_args(DRAW) for _ in range(6)], ids=lambda a: str(sorted(a.items())))
def test_generate_prints_what_the_cli_prints(client, listed, args):
    result = client.call("generate", args)
    if result.is_error:  # a drawn combination the CLI refuses: then the same line
        assert text_of(result) == cli_error(*generate_argv(args))
        return
    check_result(listed, "generate", result, cli_json(*generate_argv(args)))


def test_no_file_is_written(client, tmp_path):
    before = sorted(p.name for p in REPO.iterdir())
    client.call("generate", {"name": "w", "backend": "vllm", "model": "m"})
    client.call("upgrade", {"path": EXAMPLES[0]})
    assert sorted(p.name for p in REPO.iterdir()) == before


# -- bad input: a tool error with the CLI's line, and the server goes on ---------------------------
BAD = [
    ("explain", {"path": "no/such/file.yaml"}, ["explain", "dgd", "-f", "no/such/file.yaml", "-o", "json"], None),
    ("explain", {"manifest": "kind: [unclosed"}, ["explain", "dgd", "-f", "-", "-o", "json"], "kind: [unclosed"),
    ("upgrade", {"manifest": "a: b\n"}, ["upgrade", "dgd", "-f", "-", "-o", "json"], "a: b\n"),
    ("generate", {"name": "Bad_Name", "backend": "vllm", "model": "m"},
     ["generate", "dgd", "Bad_Name", "--backend", "vllm", "--model", "m", "-o", "json"], None),
    ("generate", {"name": "x", "backend": "vllm", "model": "m", "nodes": 2, "gpusPerNode": 8, "tp": 3},
     ["generate", "dgd", "x", "--backend", "vllm", "--model", "m", "--nodes", "2", "--gpus-per-node", "8", "--tp", "3",
      "-o", "json"], None),
    ("doctor", {"from": "no/such/bundle.tar.gz"}, ["doctor", "--from", "no/such/bundle.tar.gz", "-o", "json"], None),
    ("doctor", {"from": STATES[0], "only": ["no-such-code"]},
     ["doctor", "--from", STATES[0], "--only", "no-such-code", "-o", "json"], None),
]


@pytest.mark.parametrize("tool,args,argv,stdin", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_is_the_cli_error_and_the_server_keeps_serving(client, listed, tool, args, argv, stdin):
    result = client.call(tool, args)
    assert result.is_error
    assert text_of(result) == cli_error(*argv, input=stdin)
    check_result(listed, "explain", client.call("explain", {"path": EXAMPLES[0]}),
                 cli_json("explain", "dgd", "-f", EXAMPLES[0], "-o", "json"))


@pytest.mark.parametrize("tool,args,needle", [
    ("explain", {}, "give exactly one of manifest, path, name"),
    ("explain", {"path": "a.yaml", "name": "x"}, "give exactly one of manifest, path, name"),
    ("tree", {}, "'name' is a required property"),
    ("doctor", {"from": 3}, "3 is not of type 'string'"),
    ("get", {"kubeconfig": "/etc/passwd"}, "Additional properties are not allowed"),
    ("logs", {"name": "x", "tail": 10 ** 6}, "is greater than the maximum"),
    ("install", {}, 'unknown tool "install"'),
])
def test_arguments_outside_the_input_schema_are_tool_errors(client, tool, args, needle):
    result = client.call(tool, args)
    assert result.is_error and text_of(result).startswith("error: ") and needle in text_of(result)
    assert not client.call("doctor", {"from": STATES[0]}).is_error


@pytest.mark.parametrize("tool,args,argv", [
    ("detect", {}, ["detect"]),
    ("get", {"allNamespaces": True}, ["get", "-A"]),
    ("tree", {"name": "x", "namespace": "ns"}, ["tree", "x", "-n", "ns"]),
    ("doctor", {"name": "x"}, ["doctor", "x"]),
    ("logs", {"name": "x"}, ["logs", "x"]),
    ("placement", {}, ["placement"]),
    ("rollout_status", {"name": "x"}, ["rollout", "status", "x", "--watch=false"]),
    ("rollout_history", {"name": "x"}, ["rollout", "history", "x"]),
    ("explain", {"name": "x"}, ["explain", "dgd", "x"]),
])
def test_cluster_tools_use_the_servers_kubeconfig(client, tool, args, argv):
    """The server was started with --kubeconfig of a file that does not exist: every cluster call
    fails with the line the CLI prints for that kubeconfig (and never falls back to another)."""
    result = client.call(tool, args)
    assert result.is_error
    assert text_of(result) == cli_error(*argv, "--kubeconfig", MISSING_KUBECONFIG)
    assert MISSING_KUBECONFIG in text_of(result)


# -- resources and prompts ------------------------------------------------------------------------
def test_resources(client):
    uris = {str(r.uri) for r in client.list_resources().resources}
    assert {"kubectl-dynamo://checks", "kubectl-dynamo://fields/spec"} <= uris
    assert {f"kubectl-dynamo://schemas/{n}" for n in contracts.SCHEMAS} <= uris
    templates = {t.uri_template for t in client.list_resource_templates().resource_templates}
    assert templates == {"kubectl-dynamo://checks/{code}", "kubectl-dynamo://fields/{path}",
                         "kubectl-dynamo://schemas/{name}"}

    def read(uri):
        return json.loads(client.read(uri).contents[0].text)

    assert read("kubectl-dynamo://checks") == cli_json("doctor", "--explain", "all", "-o", "json")
    contracts.validator("check").validate(read("kubectl-dynamo://checks"))
    assert read("kubectl-dynamo://checks/kai-queue-missing") == cli_json("doctor", "--explain", "kai-queue-missing",
                                                                         "-o", "json")
    assert read("kubectl-dynamo://fields/spec.components.multinode") == cli_json(
        "explain", "dgd.spec.components.multinode", "-o", "json")
    for name in contracts.SCHEMAS:
        assert read(f"kubectl-dynamo://schemas/{name}") == contracts.schema(name)


@pytest.mark.parametrize("uri", ["kubectl-dynamo://checks/no-such-code", "kubectl-dynamo://fields/spec.nope",
                                 "kubectl-dynamo://schemas/nope", "kubectl-dynamo://other"])
def test_bad_resource_is_an_error_and_the_server_keeps_serving(client, uri):
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError) as e:
        client.read(uri)
    assert e.value.message.startswith("error: ")
    assert client.read("kubectl-dynamo://checks").contents


def test_prompts(client):
    prompts = {p.name: p for p in client.list_prompts().prompts}
    assert set(prompts) == {"dgd-not-serving", "manifest-check", "gang-pending"}
    for name in ("dgd-not-serving", "gang-pending"):
        text = client.get_prompt(name, {"name": "qwen", "namespace": "llm"}).messages[0].content.text
        assert '"name": "qwen", "namespace": "llm"' in text and "doctor" in text
    text = client.get_prompt("manifest-check", {"path": EXAMPLES[0]}).messages[0].content.text
    assert EXAMPLES[0] in text and "explain" in text
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError):
        client.get_prompt("gang-pending", {})


# -- the extra and start-up ----------------------------------------------------------------------
def test_without_the_sdk_one_error_line_with_the_install_hint():
    code = ("import sys; sys.modules['mcp'] = None\n"  # as if the extra were not installed
            "from kubectl_dynamo.cli import run\nsys.argv = ['kubectl-dynamo', 'mcp']\nrun()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: kubectl dynamo mcp needs the MCP SDK; install the extra kubectl-dynamo[mcp]: "
        "pip install 'kubectl-dynamo[mcp]' (pipx: pipx inject kubectl-dynamo 'mcp>=2.3,<3')"]


def test_only_the_mcp_command_imports_the_sdk():
    code = ("import sys\nfrom kubectl_dynamo.cli import main\n"
            "main(['mcp', '--help']); main(['explain', 'dgd', '-f', %r, '-o', 'json'])\n"
            "print('SDK' if any(m == 'mcp' or m.startswith(('mcp.', 'pydantic', 'starlette')) for m in sys.modules) "
            "else 'CLEAN')\n") % EXAMPLES[0]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "CLEAN", proc.stderr


def test_the_documented_client_entry_starts_the_server():
    """docs/mcp.md's JSON snippet is valid and what it runs initializes (its context need not exist yet)."""
    import re

    text = (REPO / "docs" / "mcp.md").read_text()
    entry = json.loads(re.findall(r"```json\n(.*?)```", text, re.S)[0])["mcpServers"]["kubectl-dynamo"]
    assert entry["command"] == "kubectl-dynamo" and entry["args"][0] == "mcp"
    assert 'kubectl-dynamo = "kubectl_dynamo.cli:run"' in (REPO / "pyproject.toml").read_text()
    with mcp_server(*entry["args"][1:]) as c:
        assert c.init.server_info.name == "kubectl-dynamo"
        result = c.call("get", {})
        assert result.is_error and text_of(result).startswith("error: ")  # the context is the server's
        assert "my-cluster" in text_of(result) or "kubeconfig" in text_of(result)


def test_streamable_http_on_loopback_only():
    """--http PORT: the SDK's streamable-HTTP client gets the same result as over stdio; the socket is
    bound to 127.0.0.1 (read from /proc/net/tcp), never to every interface."""
    import contextlib
    import socket
    import time

    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:  # a free port (the kernel's pick)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kubectl_dynamo", "mcp", "--http", str(port)], cwd=str(REPO),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:  # until the server listens (its own word: the port accepts), or it died
            assert proc.poll() is None, proc.stderr.read()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert time.monotonic() < deadline, "the server did not listen within 60 s"
            time.sleep(0.1)
        listening = [line.split()[1] for line in open("/proc/net/tcp").read().splitlines()[1:]
                     if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == port]
        assert listening == [f"0100007F:{port:04X}"]

        async def call():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, *_), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("explain", {"path": EXAMPLES[0]})

        with start_blocking_portal() as portal:
            result = portal.call(call)
        assert structured(result) == cli_json("explain", "dgd", "-f", EXAMPLES[0], "-o", "json")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
