"""Drive `sandgate mcp` with the MCP Python SDK (the `mcp` package from PyPI).

Usage: client.py PLAN_JSON

The plan says how to start the server and what to do:

    {"command": ["/path/sandgate", "mcp"], "env": {...}, "cwd": "...",
     "http": null | {"url": "http://127.0.0.1:PORT/mcp", "token": "..."},
     "mode": "legacy" | "2026-07-28",
     "elicit": null | "allow_once" | "deny_once" | ... | "decline" | "never",
     "list_tools": true,
     "calls": [{"tool": "file_read", "args": {...}}, ...]}

An argument whose value is the string "$job_id" is replaced by the `job_id`
of the most recent result that had one.

Prints one JSON object: the protocol version, the tools, every result and
every elicitation the server sent. The Rust tests assert on it.
"""

import asyncio
import json
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(plan):
    elicitations = []

    async def on_elicit(context, params):
        schema = getattr(params, "requested_schema", None)
        elicitations.append(
            {
                "message": params.message,
                "schema": schema if isinstance(schema, dict) else None,
            }
        )
        if plan["elicit"] == "decline":
            return types.ElicitResult(action="decline")
        if plan["elicit"] == "never":
            # A client that never answers: the server's deadline must end it.
            await asyncio.sleep(3600)
        return types.ElicitResult(action="accept", content={"answer": plan["elicit"]})

    if plan.get("http"):
        http = plan["http"]
        headers = {"Authorization": f"Bearer {http['token']}"} if http.get("token") else {}
        server = streamable_http_client(http["url"], http_client=create_mcp_http_client(headers=headers))
    else:
        server = StdioServerParameters(
            command=plan["command"][0],
            args=plan["command"][1:],
            env=plan["env"],
            cwd=plan["cwd"],
        )
    kwargs = {"mode": plan["mode"]}
    if plan["elicit"] is not None:
        kwargs["elicitation_callback"] = on_elicit
    out = {"results": [], "elicitations": elicitations}
    async with Client(server, **kwargs) as client:
        out["protocol"] = client.protocol_version
        if plan.get("list_tools"):
            listed = await client.list_tools()
            out["tools"] = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
        job_id = None
        for call in plan["calls"]:
            args = {k: (job_id if v == "$job_id" else v) for k, v in call["args"].items()}
            result = await client.call_tool(call["tool"], args)
            text = "".join(c.text for c in result.content if getattr(c, "type", None) == "text")
            structured = result.structured_content
            if isinstance(structured, dict) and structured.get("job_id") is not None:
                job_id = structured["job_id"]
            out["results"].append(
                {"tool": call["tool"], "is_error": bool(result.is_error), "text": text, "structured": structured}
            )
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
