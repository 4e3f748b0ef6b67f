"""The command line: thin Click commands that parse, call the core and hand a result to one renderer.

``main()`` is the only place that turns errors into exit codes: expected failures print one
``error: ...`` line (``-v`` adds details), never a traceback.
"""

from __future__ import annotations

import gc
import sys
from typing import Optional, Tuple

import click

from kubectl_dynamo import __version__
from kubectl_dynamo.errors import DynamoError, ExitCode

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


PROG = "kubectl dynamo"  # how users invoke it; usage lines say so (krew's best practice)


# command name -> (module under kubectl_dynamo.cli, the first paragraph of its docstring). A module
# is imported only when its command runs, so `explain -f` does not pay for doctor's or install's
# imports, and the group's --help lists the commands from these summaries without importing any
# (a unit test keeps each equal to its command's docstring). No summary: a hidden command.
COMMANDS = {
    "detect": ("detect", "Show installed orchestrators, queues, the Dynamo operator, GPU nodes, and the "
                         "orchestrator Dynamo will select for a new multinode DGD, with the reasons."),
    "explain": ("explain", "Show exactly what the Dynamo operator renders for a DynamoGraphDeployment."),
    "generate": ("generate", "Generate a DynamoGraphDeployment for one engine spanning several nodes."),
    "upgrade": ("upgrade", "Upgrade DynamoGraphDeployments from nvidia.com/v1alpha1 to nvidia.com/v1beta1."),
    "doctor": ("doctor", "Diagnose the cluster and every multinode DynamoGraphDeployment."),
    "get": ("get", "One row per DynamoGraphDeployment; with a NAME, one row per component and group."),
    "rollout": ("rollout", "Follow a DynamoGraphDeployment's rollout, or list its worker generations."),
    "placement": ("placement", "Every GPU node: allocatable, used by which DGD / component / group / rank, free, "
                               "and the pending gangs."),
    "tree": ("tree", "The lineage ownerReferences alone do not show, down to each rank's pod."),
    "logs": ("logs", "The logs of a DGD's pods, interleaved, each line prefixed with its rank."),
    "collect": ("collect", "A support bundle of one DGD (or a namespace, or the cluster), safe to send: one .tar.gz."),
    "install": ("install", "Install the multinode prerequisites with helm: Grove + KAI Scheduler (with the Dynamo "
                           "platform chart) or LeaderWorkerSet + Volcano."),
    "mcp": ("mcp", "Serve the read-only commands to agents over the Model Context Protocol (stdio)."),
    "version": ("version", "Print the plugin version, the Kubernetes server version and the Dynamo operator version."),
    "schema": ("schema", "Print the JSON Schema of a command's -o json output (without NAME: the list)."),
    "completion": ("completion", "Print (or --install) the kubectl_complete-dynamo helper for "
                                 "`kubectl dynamo <TAB>`."),
    "__complete": ("completion", None),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMANDS)  # the order --help shows

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        import importlib

        mod = importlib.import_module(f"{__name__}.{entry[0]}")
        return next(c for c in mod.COMMANDS if c.name == name)

    def format_commands(self, ctx, formatter):
        """Click's listing, from the summaries: importing every command module cost --help ~40 %."""
        shown = [(name, summary) for name, (_, summary) in COMMANDS.items() if summary]
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, click.Command(name, help=summary).get_short_help_str(limit))
                                for name, summary in shown])


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", message="kubectl-dynamo %(version)s")
def cli():
    """Plan, install, explain and diagnose multinode NVIDIA Dynamo deployments.

    \b
    Every subcommand takes kubectl's connection flags (--kubeconfig, --context, -n, -A)
    and -o table|wide|json|yaml. Exit codes: 0 ok, 1 findings or invalid input,
    2 usage or unreadable input, 3 cluster unreachable or unauthorized.
    """


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv) or ["--help"]  # bare: the help, once, exit 0 (as kubectl)
    code, error = invoke(argv, report=lambda text: click.echo(text, err=True))
    if error is not None:
        click.echo(error, err=True)
    return code


def invoke(argv, obj=None, report=None) -> Tuple[int, Optional[str]]:
    """Run one command line: (its exit code, its one ``error: …`` line or None). ``obj`` is the
    Environment the command runs in (default: the process's); ``report`` receives what is printed on
    stderr before the error line (the usage line, -v details). The MCP server runs its tools here, so a
    failing tool call carries the very line the CLI prints."""
    verbose = "-v" in argv or "--verbose" in argv
    say = report or (lambda text: None)
    error: Optional[str] = None
    try:  # the Environment is built by the command that runs (options.current_env), not for --help
        code = cli.main(args=list(argv), prog_name=PROG, standalone_mode=False, obj=obj)
    except DynamoError as e:
        error = f"error: {e.message}"
        if verbose and e.detail:
            say(e.detail)
        code = e.exit_code
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.UsageError as e:
        if e.ctx is not None:
            say(e.ctx.get_usage())
        error = f"error: {e.format_message()}"
        code = ExitCode.USAGE
    except click.ClickException as e:  # e.g. click.BadParameter outside parsing, FileError
        error = f"error: {e.format_message()}"
        code = ExitCode.USAGE
    except click.Abort:
        error = "error: aborted"
        code = ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        error = "error: interrupted"
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        code = ExitCode.OK
    except Exception as e:  # a bug: one line (the traceback with -v) and its own exit code
        error = (f"error: internal error: {type(e).__name__}: {_one_line(str(e))} (this is a bug in "
                 f"kubectl-dynamo {__version__}: please report it with the output of -v)")
        if verbose:
            import traceback

            say(traceback.format_exc().rstrip("\n"))
        code = ExitCode.INTERNAL
    return code_from(code), error


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def code_from(code) -> int:
    if isinstance(code, int) and not isinstance(code, bool):
        return int(code)
    return int(ExitCode.OK)


def run() -> None:  # console_scripts entry point
    code = main()
    # The process ends here: without this the interpreter's final collections walk every object
    # still alive (all the imported modules, the parsed schema) for nothing, ~10 ms of explain -f.
    gc.freeze()
    sys.exit(code)
