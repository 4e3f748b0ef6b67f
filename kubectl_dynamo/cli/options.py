"""Shared options: every subcommand takes kubectl's connection and output flags.

kubectl does not pass its own flags to plugins, so ``kubectl dynamo doctor --context x`` must be
parsed here, after the subcommand (the sqlite-utils ``output_options`` pattern).
"""

from __future__ import annotations

import contextlib
import functools
import gc
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Tuple

import click

from kubectl_dynamo.environment import Environment
from kubectl_dynamo.errors import UsageError
from kubectl_dynamo.output.render import FORMATS, JUNIT, render
from kubectl_dynamo.result import Result

if TYPE_CHECKING:
    from kubectl_dynamo.cluster.client import Target

DRY_RUN = ("none", "client", "server")  # --dry-run, as kubectl's
# What a user may type for a DGD, as kubectl takes a kind's short name, singular, plural and qualified plural
# (here, not in cluster/kinds.py: explain -f would import the whole table at start-up for six strings).
DGD_ALIASES = ("dgd", "dgds", "dynamographdeployment", "dynamographdeployments",
               "dynamographdeployment.nvidia.com", "dynamographdeployments.nvidia.com")


def without_kind(args: Tuple[str, ...]) -> list:
    """``[dgd] NAME ...`` -> ``[NAME ...]``: the kind word is optional, as in kubectl."""
    words = list(args)
    return words[1:] if words and words[0].lower() in DGD_ALIASES else words


class Options:  # not a dataclass: creating that class cost every command ~1 ms
    def __init__(self, connection: Tuple[Optional[str], ...], all_namespaces: bool, output: str, verbose: bool,
                 env: Environment) -> None:
        self.connection = connection  # --kubeconfig, --context, -n, --request-timeout
        self.all_namespaces = all_namespaces
        self.output = output
        self.verbose = verbose
        self.env = env

    @functools.cached_property
    def target(self) -> Target:
        """Built on first use: the client module is not imported by commands that never connect."""
        from kubectl_dynamo.cluster.client import Target

        kubeconfig, context, namespace, timeout = self.connection
        return Target(kubeconfig, context, namespace, timeout, verbose=self.verbose)

    def cluster(self) -> Any:
        return self.env.cluster_factory(self.target)


def lazy_complete(name: str) -> Callable:
    """A shell_complete callback of cli/completion.py, imported only when a <TAB> asks for it."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
        from kubectl_dynamo.cli import completion

        return getattr(completion, name)(ctx, param, incomplete)

    return complete


def current_env() -> Environment:
    """The Environment on the context (a caller's ``obj``), else the process's, built once per command."""
    ctx = click.get_current_context(silent=True)
    env = ctx.find_object(Environment) if ctx else None
    return env or Environment.from_process()


def _duration(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if value == param.default:  # known good: commands that never connect need not import the client
        return value
    from kubectl_dynamo.cluster.client import parse_duration

    parse_duration(value)  # a bad duration is a usage error even when the command never connects
    return value


def operator_version(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """--operator-version: a version (else a usage error, exit 2); one newer than the simulation
    models is used as the nearest modelled one, with a warning on stderr saying so."""
    if value is None:
        return None
    from kubectl_dynamo.operator import versions

    if not versions.is_valid(value):
        raise UsageError(f"--operator-version {value!r} is not a version such as {versions.NEWEST}")
    note = versions.unmodelled(value)
    if note:
        current_env().err(f"warning: {note}")
    return value


def kube_options(*, all_namespaces: bool = True, default_format: str = "table", formats: bool = True, junit: bool = False,
                 namespace_help: str = "Namespace (default: the context's namespace).") -> Callable:
    """Add --kubeconfig, --context, -n, [-A], --request-timeout, [-o], -v; pass ``opts: Options``.
    ``formats=False`` for commands whose output is a stream, not a result (logs); ``junit``: also -o junit."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, kubeconfig, context, namespace, request_timeout, verbose, output=default_format,
                    all_namespaces_flag=False, **kwargs):
            opts = Options((kubeconfig, context, namespace, request_timeout), all_namespaces_flag, output, verbose,
                           current_env())
            return fn(*args, opts=opts, **kwargs)

        options = [
            click.option("--kubeconfig", metavar="PATH", envvar=None,
                         help="Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)."),
            click.option("--context", metavar="NAME", help="The kubeconfig context to use.",
                         shell_complete=lazy_complete("complete_context")),
            click.option("-n", "--namespace", metavar="NS", help=namespace_help,
                         shell_complete=lazy_complete("complete_namespace")),
        ]
        if all_namespaces:
            options.append(click.option("-A", "--all-namespaces", "all_namespaces_flag", is_flag=True,
                                        help="Across all namespaces."))
        options.append(click.option("--request-timeout", metavar="DURATION", default="10s", show_default=True,
                                    callback=_duration,
                                    help='Per-request timeout, e.g. 30s, 2m; "0" waits forever.'))
        if formats:
            choices = list(FORMATS) + ([JUNIT] if junit else [])
            options.append(click.option("-o", "--output", type=click.Choice(choices), default=default_format,
                                        show_default=True, help="Output format."))
        options.append(click.option("-v", "--verbose", is_flag=True, help="Show details of errors."))
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return decorate


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a command with bounded work runs (as a decorator): its
    imports and parsed data hold no garbage cycles, the collector would only walk them again and
    again (explain -f: ~17 collections, ~2.5 ms)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def emit(opts: Options, result: Result) -> None:
    """Hand the result to the one renderer and end the command with its exit code."""
    finish(render(result, opts.output, opts.env))


def finish(code: int) -> None:
    """End a command with an exit code (0 returns normally). Raised as click's Exit so both
    ``main()`` and Click's test runner see it."""
    if int(code):
        click.get_current_context().exit(int(code))


class Duration(click.ParamType):
    """kubectl's durations for --since and friends: 30s, 5m, 1h30m (a bare number is seconds) -> seconds."""

    name = "duration"

    def convert(self, value, param, ctx):
        from kubectl_dynamo.durations import seconds

        if isinstance(value, (int, float)):
            return float(value)
        text = str(value).strip()
        total = seconds(text)
        if total is None:
            self.fail(f'"{text}" is not a duration such as 30s, 5m or 1h30m', param, ctx)
        return total
