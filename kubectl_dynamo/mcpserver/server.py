"""``kubectl dynamo mcp``: the plugin's read-only commands as an MCP server (the official Python SDK).

Every tool call, resource read and the like is one command line of the plugin, run in-process by the
CLI's own runner (handed in as ``run``, so this package sits below ``cli/`` and the flags, the
validation and the one-line errors are the CLI's, not a copy): its stdout, the ``-o json`` document,
is the call's ``structuredContent`` and its text; its ``error: …`` line is a tool error, and the
server goes on serving. The SDK (pydantic, starlette, …) is imported only here, by this command.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import anyio
import anyio.to_thread
from mcp import types
from mcp.server import Server

from kubectl_dynamo import __version__
from kubectl_dynamo.environment import Environment
from kubectl_dynamo.mcpserver import prompts
from kubectl_dynamo.mcpserver.tools import BY_NAME, LOG_CHARS_MAX, TOOLS, Tool, bundled_schema, command_line

# (argv, Environment) -> (exit code, the one `error: …` line or None): cli.invoke
Runner = Callable[[List[str], Any], Tuple[int, Optional[str]]]

SCHEME = "kubectl-dynamo"
INSTRUCTIONS = (
    "Read-only tools over kubectl-dynamo, a kubectl plugin for NVIDIA Dynamo multinode inference on Kubernetes. "
    "Start with doctor (findings, root causes first, each with a stable id and a fix), then tree, get, logs, "
    "placement, rollout_status; explain and upgrade check a manifest offline. Results are the commands' -o json "
    "contracts. Nothing here writes to the cluster."
)


class Commands:
    """Runs one command line at a time, in a worker thread, on private streams."""

    def __init__(self, run: Runner, connection: List[str]) -> None:
        self.run = run
        self.connection = connection  # the server's --kubeconfig/--context/--request-timeout, for the cluster tools
        self.lock = anyio.Lock()  # one command at a time: they share the process (gc, click's context stack)

    async def __call__(self, argv: List[str], stdin: Optional[str] = None) -> Tuple[int, str, str, Optional[str]]:
        async with self.lock:
            return await anyio.to_thread.run_sync(self._run, argv, stdin)

    def _run(self, argv: List[str], stdin: Optional[str]) -> Tuple[int, str, str, Optional[str]]:
        out, err = io.StringIO(), io.StringIO()
        env = Environment(stdin=io.StringIO(stdin or ""), stdout=out, stderr=err, environ=os.environ)
        code, error = self.run(argv, env)
        return code, out.getvalue(), err.getvalue(), error


def _tool_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def _validate_arguments(tool: Tool, arguments: Dict[str, Any]) -> Optional[str]:
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(tool.input_schema()).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    e = errors[0]
    where = "/".join(str(p) for p in e.path)
    if e.validator == "oneOf" and tool.one_of:
        return f"error: {tool.name}: give exactly one of {', '.join(tool.one_of)}"
    return f"error: {tool.name}: invalid arguments{' at ' + where if where else ''}: {e.message}"


def build_server(run: Runner, connection: List[str]) -> Server:
    commands = Commands(run, connection)
    schemas = {t.name: bundled_schema(t.schema) for t in TOOLS if t.schema}
    listed = [
        types.Tool(
            name=t.name, title=t.title, description=t.description, input_schema=t.input_schema(),
            output_schema=schemas.get(t.name),
            annotations=types.ToolAnnotations(title=t.title, read_only_hint=True, destructive_hint=False,
                                              idempotent_hint=True, open_world_hint=False),
        )
        for t in TOOLS
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            return _tool_error(f'error: unknown tool "{params.name}" (known: {", ".join(BY_NAME)})')
        arguments = dict(params.arguments or {})
        problem = _validate_arguments(tool, arguments)
        if problem:
            return _tool_error(problem)
        argv, stdin = command_line(tool, arguments, commands.connection)
        code, out, err, error = await commands(argv, stdin)
        meta = {"kubectl-dynamo/exitCode": code}
        if error is not None:
            return _tool_error(error)
        if tool.schema is None:  # logs: text, bounded
            text = out if len(out) <= LOG_CHARS_MAX else out[-LOG_CHARS_MAX:]
            if err.strip():
                text += ("\n" if text and not text.endswith("\n") else "") + err
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=code != 0 and not out,
                                        _meta=meta)
        try:
            data = json.loads(out)
        except ValueError:  # not a bug to hide: what the command said instead
            return _tool_error(f"error: {tool.name} printed no JSON (exit {code}): {(err or out).strip()[:500]}")
        return types.CallToolResult(content=[types.TextContent(text=out)], structured_content=data, _meta=meta)

    # -- resources: the catalogue, the field docs, the schemas ---------------------------------------
    from kubectl_dynamo import contracts

    static = [
        types.Resource(uri=f"{SCHEME}://checks", name="checks", title="The findings catalogue",
                       description="Every finding code: severity, what, why, fix, refs (doctor --explain all).",
                       mime_type="application/json"),
        types.Resource(uri=f"{SCHEME}://fields/spec", name="fields-spec", title="DGD field docs: spec",
                       description="explain dgd.spec: the bundled v1beta1 CRD's documentation of spec.",
                       mime_type="application/json"),
    ] + [
        types.Resource(uri=f"{SCHEME}://schemas/{n}", name=f"schema-{n}", title=f"JSON Schema: {n}",
                       description=what, mime_type="application/schema+json")
        for n, what in contracts.SCHEMAS.items()
    ]
    templates = [
        types.ResourceTemplate(uri_template=f"{SCHEME}://checks/{{code}}", name="check",
                               title="One finding code", description="doctor --explain CODE",
                               mime_type="application/json"),
        types.ResourceTemplate(uri_template=f"{SCHEME}://fields/{{path}}", name="fields",
                               title="DGD field docs",
                               description="explain dgd.PATH, e.g. spec.components.multinode (the bundled CRD)",
                               mime_type="application/json"),
        types.ResourceTemplate(uri_template=f"{SCHEME}://schemas/{{name}}", name="schema",
                               title="A -o json contract", description="kubectl dynamo schema NAME",
                               mime_type="application/schema+json"),
    ]

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=static)

    async def list_resource_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        prefix = f"{SCHEME}://"
        kind, _, rest = uri[len(prefix):].partition("/") if uri.startswith(prefix) else ("", "", "")
        if kind == "checks":
            argv = ["doctor", "--explain", rest or "all", "-o", "json"]
        elif kind == "fields" and rest:
            argv = ["explain", "dgd." + rest, "-o", "json"]
        elif kind == "schemas" and rest:
            argv = ["schema", rest, "-o", "json"]
        else:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, f"error: unknown resource {uri} (known: {prefix}checks[/CODE], "
                                                 f"{prefix}fields/PATH, {prefix}schemas/NAME)")
        code, out, err, error = await commands(argv)
        if error is not None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, error)
        mime = "application/schema+json" if kind == "schemas" else "application/json"
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=out)])

    # -- prompts ---------------------------------------------------------------------------------------
    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=p.name, title=p.title, description=p.description,
                         arguments=[types.PromptArgument(name=a, description=d, required=r) for a, d, r in p.arguments])
            for p in prompts.PROMPTS
        ])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        prompt = prompts.BY_NAME.get(params.name)
        if prompt is None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, f'error: unknown prompt "{params.name}" '
                                                 f'(known: {", ".join(prompts.BY_NAME)})')
        arguments = dict(params.arguments or {})
        missing = [a for a, _, required in prompt.arguments if required and not arguments.get(a)]
        if missing:
            from mcp.shared.exceptions import MCPError

            raise MCPError(types.INVALID_PARAMS, f"error: prompt {prompt.name} needs {', '.join(missing)}")
        return types.GetPromptResult(description=prompt.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=prompt.render(arguments)))])

    return Server(
        "kubectl-dynamo", version=__version__, title="kubectl-dynamo (read-only)", instructions=INSTRUCTIONS,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt,
    )


def serve_stdio(run: Runner, connection: List[str]) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(run, connection)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def serve_http(run: Runner, connection: List[str], port: int) -> None:
    """Streamable HTTP on 127.0.0.1 only (the SDK's DNS-rebinding protection for localhost is on)."""
    import uvicorn

    server = build_server(run, connection)
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")).run()
