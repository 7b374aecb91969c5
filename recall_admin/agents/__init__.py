"""Agents connect: the memory tools over MCP (stdio, one agent) and HTTP (keys, many agents).

``tools`` owns the tools (names, schemas, descriptions, dispatch to the same views the
CLI's JSON uses); ``keys`` the bearer keys and namespaces; ``attribution`` which key
wrote an event; ``mcp_server`` and ``http`` the two transports. Importing this package
imports neither the MCP SDK nor Starlette (docs/agents.md).
"""
