"""A synchronous handle on the official MCP SDK client (stdio_client + ClientSession) talking to a
real ``python -m kubectl_dynamo mcp`` subprocess, for tests: an anyio blocking portal runs the
client's event loop in a thread, so a test calls ``client.call("doctor", {...})`` plainly."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, Dict, Iterator, List, Optional

from tests.conftest import REPO


class McpClient:
    def __init__(self, portal: Any, session: Any) -> None:
        self.portal = portal
        self.session = session
        self.init: Any = None

    def call(self, name: str, arguments: Optional[Dict[str, Any]] = None) -> Any:
        return self.portal.call(lambda: self.session.call_tool(name, arguments or {}))

    def tools(self) -> List[Any]:
        return self.portal.call(self.session.list_tools).tools

    def read(self, uri: str) -> Any:
        return self.portal.call(lambda: self.session.read_resource(uri))

    def __getattr__(self, name: str) -> Any:  # any other ClientSession request, run in the portal
        method = getattr(self.session, name)
        return lambda *a, **k: self.portal.call(lambda: method(*a, **k))


@contextlib.contextmanager
def mcp_server(*server_args: str, env: Optional[Dict[str, str]] = None) -> Iterator[McpClient]:
    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "kubectl_dynamo", "mcp", *server_args],
                                   env={**os.environ, **(env or {})}, cwd=str(REPO))

    @contextlib.asynccontextmanager
    async def connected():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            yield session, init

    with start_blocking_portal() as portal, portal.wrap_async_context_manager(connected()) as (session, init):
        client = McpClient(portal, session)
        client.init = init
        yield client


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def structured(result: Any) -> Any:
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert json.loads(text_of(result)) == result.structured_content  # the text is the same document
    return result.structured_content
