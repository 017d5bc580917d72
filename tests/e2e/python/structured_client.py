"""Drives the worker with the official MCP Python client (PyPI `mcp`) for the structured-output
end-to-end spec (tests/e2e/structured-python.test.mjs), which starts the worker, writes a plan to
this script's stdin and checks what it prints.

Every call goes through `Client.call_tool`, which validates structuredContent against the tool's
listed outputSchema with jsonschema and raises on a mismatch; such a failure is reported per call,
so the spec sees it as a failed call. The script also reads oversized results back the way a
code-mode program would: artifact_read from offset 0 until eof, base64-decoding and joining.

Plan (JSON on stdin):
  {"url": ..., "token": ..., "mode": "auto" | "legacy",
   "calls": [{"name": ..., "arguments": {...}, "readArtifact": bool}]}
Report (JSON on stdout):
  {"protocolVersion": ..., "tools": {name: outputSchema | null},
   "validationControl": {...},
   "calls": [{"ok": bool, "error"?: str, "isError"?: bool, "texts"?: [...],
              "structuredContent"?: ..., "hasStructured"?: bool, "artifact"?: {...}}]}
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ARTIFACT_READ = "artifact_read"


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", None) == "text"]


async def read_artifact(client: Client, artifact_id: str, max_bytes: int) -> dict[str, Any]:
    """Reads an artifact whole, chunk by chunk, as a harness program would."""
    offset = 0
    chunks: list[bytes] = []
    reads = 0
    total = None
    while True:
        result = await client.call_tool(
            ARTIFACT_READ, {"artifactId": artifact_id, "offset": offset, "maxBytes": max_bytes}
        )
        if result.is_error:
            return {"ok": False, "error": " ".join(texts(result)), "reads": reads}
        # artifact_read answers in its text as JSON, and in structuredContent where it has any.
        page = result.structured_content or json.loads(texts(result)[0])
        reads += 1
        if page["offset"] != offset:
            return {"ok": False, "error": f"read at {offset} answered offset {page['offset']}", "reads": reads}
        chunks.append(base64.b64decode(page["data"]))
        total = page["totalBytes"]
        if page["eof"]:
            break
        if page["nextOffset"] <= offset:
            return {"ok": False, "error": f"nextOffset {page['nextOffset']} does not advance", "reads": reads}
        offset = page["nextOffset"]
    whole = b"".join(chunks)
    return {"ok": True, "reads": reads, "totalBytes": total, "text": whole.decode("utf-8")}


async def validation_control(client: Client, tools: dict[str, Any]) -> dict[str, Any]:
    """Shows that the client's own check is live: a result that breaks a listed schema is refused.

    Takes the first listed tool with an outputSchema and asks the session to validate a result
    whose structuredContent has `nextPage: 0` / `data` removed, which no schema here allows.
    """
    import mcp_types as types

    name = next((n for n, schema in tools.items() if schema), None)
    if name is None:
        return {"checked": False}
    bad = types.CallToolResult(
        content=[types.TextContent(type="text", text="x")],
        structured_content={"nextPage": 0, "cache": {"hit": "yes"}},
    )
    try:
        await client.session.validate_tool_result(name, bad)
    except RuntimeError as error:
        return {"checked": True, "tool": name, "rejected": True, "message": str(error)[:300]}
    return {"checked": True, "tool": name, "rejected": False}


async def run(plan: dict[str, Any]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {plan['token']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        transport = streamable_http_client(plan["url"], http_client=http)
        async with Client(transport, mode=plan.get("mode", "auto"), cache=None) as client:
            listed = await client.list_tools()
            tools = {t.name: copy.deepcopy(t.output_schema) for t in listed.tools}
            report: dict[str, Any] = {
                "protocolVersion": client.protocol_version,
                "tools": tools,
                "validationControl": await validation_control(client, tools),
                "calls": [],
            }
            for call in plan["calls"]:
                entry: dict[str, Any]
                try:
                    result = await client.call_tool(call["name"], call.get("arguments") or {})
                    entry = {
                        "ok": True,
                        "isError": bool(result.is_error),
                        "texts": texts(result),
                        "hasStructured": result.structured_content is not None,
                        "structuredContent": result.structured_content,
                    }
                    incomplete = (result.structured_content or {}).get("incomplete") or {}
                    if call.get("readArtifact") and incomplete.get("artifactId"):
                        entry["artifact"] = await read_artifact(
                            client, incomplete["artifactId"], call.get("chunkBytes", 65536)
                        )
                except Exception as error:  # the spec asserts on the message
                    entry = {"ok": False, "error": f"{type(error).__name__}: {error}"[:2000]}
                report["calls"].append(entry)
            return report


def main() -> None:
    plan = json.load(sys.stdin)
    report = asyncio.run(run(plan))
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
