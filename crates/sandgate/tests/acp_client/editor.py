"""An editor for the `sandgate acp` tests, built on the official ACP Python
SDK (`agent-client-protocol`, pinned in .ci/run).

Usage: python3 editor.py PLAN.json

The plan (JSON) says what to start and how to answer:

- "command": the argv to start (`sandgate acp ... -- AGENT ...`),
  "cwd", "env": where and with what environment;
- "session_cwd": the `cwd` of `session/new` (default: "cwd");
- "load_session": load this session (`session/load`, in "session_cwd")
  instead of starting a new one;
- "fs": declare `fs.readTextFile` / `fs.writeTextFile` (the editor then
  reads and writes files for the agent);
- "answers": the option kinds to pick, one per permission request, in order
  (`allow_once`, `allow_always`, `reject_once`, `reject_always`, or
  `cancelled`); past the list, `reject_once`;
- "prompts": the prompts to send, one turn each;
- "cancel_after_permission": cancel the turn when the first permission
  request arrives (answering it `cancelled`, as the protocol says);
- "record": where to write what happened (JSON): the permission requests
  received, the file and terminal requests, the session updates, each
  turn's stop reason or error, and how the agent process ended.
- "stderr": the file the started program's stderr goes to;
- "deadline": seconds for the whole conversation (default 150).
"""

import asyncio
import json
import sys

import acp
from acp import schema


class Editor:
    def __init__(self, plan, record):
        self.plan = plan
        self.record = record
        self.answers = list(plan.get("answers", []))
        self.conn = None
        self.session_id = None

    def on_connect(self, conn):
        self.conn = conn

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.record["permissions"].append(
            {
                "sessionId": session_id,
                "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
                "options": [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options],
            }
        )
        if self.plan.get("cancel_after_permission") and not self.record.get("cancelled"):
            self.record["cancelled"] = True
            await self.conn.cancel(session_id=session_id)
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        kind = self.answers.pop(0) if self.answers else "reject_once"
        if kind == "cancelled":
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        for option in options:
            if option.kind == kind:
                return schema.RequestPermissionResponse(
                    outcome=schema.AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
        raise acp.RequestError.invalid_params({"no option of kind": kind})

    async def session_update(self, session_id, update, **kwargs):
        self.record["updates"].append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.record["fs"].append({"method": "fs/write_text_file", "path": path})
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return schema.WriteTextFileResponse()

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.record["fs"].append({"method": "fs/read_text_file", "path": path})
        try:
            with open(path, encoding="utf-8") as f:
                return schema.ReadTextFileResponse(content=f.read())
        except FileNotFoundError:
            raise acp.RequestError.resource_not_found(path)

    async def create_terminal(self, session_id, command, args=None, env=None, cwd=None, output_byte_limit=None, **kwargs):
        self.record["fs"].append({"method": "terminal/create", "command": command, "args": args or []})
        raise acp.RequestError.method_not_found("terminal/create")

    async def ext_method(self, method, params):
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        return None


async def converse(plan, record):
    editor = Editor(plan, record)
    fs = bool(plan.get("fs"))
    command = plan["command"]
    stderr = open(plan["stderr"], "wb")
    async with acp.spawn_agent_process(
        editor,
        command[0],
        *command[1:],
        env=plan.get("env"),
        cwd=plan.get("cwd"),
        transport_kwargs={"limit": 256 * 1024 * 1024, "stderr": stderr},
    ) as (conn, process):
        record["pid"] = process.pid
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                terminal=False,
            ),
            client_info=schema.Implementation(name="sandgate-test-editor", version="1"),
        )
        record["initialize"] = init.model_dump(mode="json", by_alias=True, exclude_none=True)
        session_cwd = plan.get("session_cwd", plan["cwd"])
        if plan.get("load_session"):
            await conn.load_session(cwd=session_cwd, session_id=plan["load_session"], mcp_servers=[])
            session_id = plan["load_session"]
        else:
            session_id = (await conn.new_session(cwd=session_cwd, mcp_servers=[])).session_id
        editor.session_id = session_id
        record["session"] = session_id
        for text in plan.get("prompts", []):
            try:
                result = await conn.prompt(
                    session_id=session_id,
                    prompt=[schema.TextContentBlock(type="text", text=text)],
                )
                record["turns"].append({"stopReason": result.stop_reason})
            except Exception as e:  # the turn's error is part of the record
                record["turns"].append({"error": repr(e)})
        # The editor goes away: closing the agent's stdin.
        process.stdin.close()
        try:
            record["exit"] = await asyncio.wait_for(process.wait(), 20)
        except asyncio.TimeoutError:
            record["exit"] = "still running 20 s after the editor closed"
            process.kill()
            await process.wait()


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    record = {"permissions": [], "updates": [], "fs": [], "turns": []}
    try:
        asyncio.run(asyncio.wait_for(converse(plan, record), plan.get("deadline", 150)))
    except BaseException as e:  # recorded, then the record is written
        record["failure"] = repr(e)
    with open(plan["record"], "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
