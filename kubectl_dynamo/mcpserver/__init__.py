"""The MCP front end: the plugin's read-only commands as Model Context Protocol tools (``kubectl dynamo mcp``).

``tools.py`` and ``prompts.py`` are plain tables; ``server.py`` is the only module that imports the
MCP SDK, and only ``kubectl dynamo mcp`` imports it (the SDK is the optional extra ``kubectl-dynamo[mcp]``).
"""
