"""Command-line conventions: help, flags on every subcommand, exit codes, lazy imports."""

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from kubectl_dynamo.cli import PROG, cli, main
from kubectl_dynamo.errors import ExitCode
from kubectl_dynamo.output.render import FORMATS
from tests.conftest import REPO, run_cli

COMMANDS = sorted(name for name in cli.list_commands(None) if not cli.get_command(None, name).hidden)
CLUSTER_FLAGS = ("--kubeconfig", "--context", "--namespace", "--request-timeout", "--output", "--verbose")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(command, flag):
    result = CliRunner().invoke(cli, [command, flag], prog_name=PROG)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: {PROG} {command}")


# Their output is not a result: logs streams lines, collect writes the bundle -o names (issue #15).
NOT_A_RESULT = {"logs": None, "collect": "BUNDLE.tar.gz"}


# completion and schema are offline; mcp is a server: --kubeconfig/--context/--request-timeout for all its calls,
# each call's namespace and output are the tools' (tests/unit/test_mcp.py)
@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in ("completion", "schema", "mcp")])
def test_every_cluster_command_takes_kubectl_flags(command):
    group = cli.get_command(None, command)
    for sub in sorted(group.list_commands(None)) if isinstance(group, click.Group) else [None]:
        _takes_kubectl_flags(command, [command] + ([sub] if sub else []))


def _takes_kubectl_flags(command: str, argv: list) -> None:
    out = CliRunner().invoke(cli, [*argv, "--help"], prog_name=PROG).output
    for flag in CLUSTER_FLAGS:
        if flag == "--output" and command in NOT_A_RESULT:
            continue
        assert flag in out, f"{command} lacks {flag}"
    if command in NOT_A_RESULT:
        assert ("-o, --output " + NOT_A_RESULT[command]) in out if NOT_A_RESULT[command] else "--output" not in out
    else:
        assert "table|wide|json|yaml" in out or "table|json|yaml" in out


def _imports_kubernetes(*args):
    code = ("import sys; sys.argv=['kubectl-dynamo', *%r]\n"
            "from kubectl_dynamo.cli import main\n"
            "rc = main(sys.argv[1:])\n"
            "print('KUBERNETES_LOADED' if any(m == 'kubernetes' or m.startswith('kubernetes.') "
            "for m in sys.modules) else 'CLEAN')\n") % (list(args),)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO))
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("args", [["--help"], ["version", "--client"], ["detect", "--help"],
                                  ["completion"], ["__complete", "d"]])
def test_offline_commands_never_import_kubernetes(args):
    assert _imports_kubernetes(*args) == "CLEAN"


def test_every_command_module_imports_without_kubernetes():
    code = ("import sys, importlib\n"
            "from kubectl_dynamo.cli import COMMANDS\n"
            "for m, _ in COMMANDS.values(): importlib.import_module('kubectl_dynamo.cli.' + m)\n"
            "print('KUBERNETES_LOADED' if any(m == 'kubernetes' or m.startswith('kubernetes.') "
            "for m in sys.modules) else 'CLEAN')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO))
    assert proc.stdout.strip() == "CLEAN", proc.stderr


def test_only_the_invoked_command_is_imported():
    code = ("import sys\nfrom kubectl_dynamo.cli import main\n"
            "main(['version', '--client'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('kubectl_dynamo.cli.')))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO))
    assert proc.stdout.strip().splitlines()[-1] == "['kubectl_dynamo.cli.options', 'kubectl_dynamo.cli.version']"


def test_group_help_imports_no_command_module():
    code = ("import sys\nfrom kubectl_dynamo.cli import main\n"
            "main(['--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('kubectl_dynamo.cli.')))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO))
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr
    assert "doctor      Diagnose the cluster and every multinode" in proc.stdout


@pytest.mark.parametrize("limit", [30, 45, 70, 200])
def test_group_help_summaries_are_the_commands_docstrings(limit):
    """--help lists COMMANDS' summaries; each must say what the command's own help says."""
    import click

    from kubectl_dynamo.cli import COMMANDS, cli

    ctx = click.Context(cli)
    for name, (_, summary) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command.hidden == (summary is None), name
        if summary is not None:
            assert click.Command(name, help=summary).get_short_help_str(limit) == command.get_short_help_str(limit)


def test_version_client_json():
    proc = run_cli("version", "--client", "-o", "json")
    assert proc.returncode == 0
    from kubectl_dynamo import __version__

    data = json.loads(proc.stdout)
    assert data["clientVersion"] == __version__
    import os
    import platform

    # A source checkout has no _build.py (scripts/release writes it into the built artifacts only).
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    assert data["clientBuild"] == {"gitCommit": None, "platform": f"{sys.platform}/{arch}",
                                   "python": platform.python_version()}


def test_usage_error_is_one_line_and_exit_2():
    proc = run_cli("detect", "-o", "xml")
    assert proc.returncode == 2
    assert "error: Invalid value for '-o' / '--output'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_command_exit_2():
    proc = run_cli("frobnicate")
    assert proc.returncode == 2 and "error: No such command 'frobnicate'" in proc.stderr


def test_missing_kubeconfig_is_usage_error(tmp_path):
    proc = run_cli("detect", "--kubeconfig", str(tmp_path / "nope"), env={"KUBERNETES_SERVICE_HOST": ""})
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: no kubeconfig found")


def test_bad_request_timeout(tmp_path):
    cfg = tmp_path / "kc"
    cfg.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                   "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                   "current-context: x\n")
    proc = run_cli("detect", "--kubeconfig", str(cfg), "--request-timeout", "soon")
    assert proc.returncode == 2 and 'invalid --request-timeout "soon"' in proc.stderr


def test_completion_protocol():
    proc = run_cli("__complete", "de")
    lines = proc.stdout.splitlines()
    assert lines[-1] == ":4"
    assert [l.split("\t")[0] for l in lines[:-1]] == ["detect"]
    proc = run_cli("__complete", "detect", "-o", "")
    assert proc.stdout.splitlines() == [*FORMATS, ":4"]  # every format, completed


def test_completion_install_writes_an_executable_shim(tmp_path):
    proc = run_cli("completion", "--install", str(tmp_path))
    assert proc.returncode == 0
    shim = tmp_path / "kubectl_complete-dynamo"
    assert shim.stat().st_mode & 0o111
    assert 'exec kubectl-dynamo __complete "$@"' in shim.read_text()


def test_main_returns_exit_code_for_internal_errors(monkeypatch, capsys):
    from kubectl_dynamo.commands import version as version_module

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(version_module, "run_version", boom)
    assert main(["version", "--client"]) == ExitCode.INTERNAL == 70
    err = capsys.readouterr().err
    assert err.startswith("error: internal error: RuntimeError: kaput") and "Traceback" not in err
