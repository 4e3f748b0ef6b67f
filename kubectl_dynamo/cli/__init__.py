"""The command line: thin Click commands that parse, call the core and hand a result to one renderer.

``main()`` is the only place that turns errors into exit codes: expected failures print one
``error: ...`` line (``-v`` adds details), never a traceback.
"""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..errors import DynamoError, ExitCode

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


PROG = "kubectl dynamo"  # how users invoke it; usage lines say so (krew's best practice)


# command name -> module under kubectl_dynamo.cli; a module is imported only when its command runs
# (or for the group's --help), so `explain -f` does not pay for doctor's or install's imports.
COMMAND_MODULES = {
    "detect": "detect", "explain": "explain", "generate": "generate", "upgrade": "upgrade", "doctor": "doctor",
    "get": "get", "tree": "tree", "logs": "logs", "collect": "collect",
    "install": "install", "version": "version", "completion": "completion", "__complete": "completion",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return list(COMMAND_MODULES)  # the order --help shows

    def get_command(self, ctx, name):
        module = COMMAND_MODULES.get(name)
        if module is None:
            return None
        import importlib

        mod = importlib.import_module(f"{__name__}.{module}")
        return next(c for c in mod.COMMANDS if c.name == name)


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
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in argv or "--verbose" in argv
    from ..environment import Environment

    try:
        code = cli.main(args=argv, prog_name=PROG, standalone_mode=False, obj=Environment.from_process())
    except DynamoError as e:
        click.echo(f"error: {e.message}", err=True)
        if verbose and e.detail:
            click.echo(e.detail, err=True)
        code = e.exit_code
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.UsageError as e:
        if e.ctx is not None:
            click.echo(e.ctx.get_usage(), err=True)
        click.echo(f"error: {e.format_message()}", err=True)
        code = ExitCode.USAGE
    except click.ClickException as e:  # e.g. click.BadParameter outside parsing, FileError
        click.echo(f"error: {e.format_message()}", err=True)
        code = ExitCode.USAGE
    except click.Abort:
        click.echo("error: aborted", err=True)
        code = ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        code = ExitCode.OK
    except Exception as e:  # a bug: one line (the traceback with -v) and its own exit code
        click.echo(f"error: internal error: {type(e).__name__}: {_one_line(str(e))} (this is a bug in "
                   f"kubectl-dynamo {__version__}: please report it with the output of -v)", err=True)
        if verbose:
            import traceback

            traceback.print_exc()
        code = ExitCode.INTERNAL
    return code_from(code)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def code_from(code) -> int:
    if isinstance(code, int) and not isinstance(code, bool):
        return int(code)
    return int(ExitCode.OK)


def run() -> None:  # console_scripts entry point
    sys.exit(main())
