#!/usr/bin/env python3
"""A scripted model server for the real-agent tests (Python 3 standard library only).

It speaks just enough of three wire protocols for Claude Code, Codex CLI and
Gemini CLI to run a scripted conversation:

- Anthropic Messages API: ``POST /v1/messages`` (SSE when ``"stream": true``,
  plain JSON otherwise), ``POST /v1/messages/count_tokens``;
- OpenAI Responses API: ``POST /v1/responses`` (SSE);
- Gemini: ``POST /v1beta/models/M:generateContent`` (plain JSON) and
  ``POST /v1beta/models/M:streamGenerateContent?alt=sse`` (SSE).

Usage: ``model_server.py SCRIPT.json RECORD.jsonl``. It listens on a free port
of 127.0.0.1 and prints ``PORT <n>`` on stdout once it accepts connections.
SCRIPT is read again for every request, so one server serves several runs.

The script is ``{"steps": [STEP, ...], "final": "TEXT"}``. A STEP is one tool
call: ``{"name": N, "args": {...}}`` (a function call), or for Codex's freeform
tools ``{"name": "apply_patch", "custom": "PATCH TEXT"}``; an optional
``"namespace"`` is sent with a Codex function call. The *main* conversation is
the request that offers tools: when it already carries ``k`` tool results, the
server answers step ``k``, and after the last step the ``final`` text. Every
other request (titles, token counts, Gemini's router and next-speaker checks)
gets a plain text answer (for Gemini's ``generateContent``, a JSON object that
satisfies each of its checks).

Every request is appended to RECORD as one JSON line: arrival and end times
(``time.time()``), path, the parsed body, whether it was the main
conversation, and the step it answered. The tests read RECORD to see what the
agent sent the model (tool results, and that no secret ever reached it).
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT_PATH = ""
RECORD_PATH = ""
RECORD_LOCK = threading.Lock()
COUNTER = [0]


def next_id(prefix):
    with RECORD_LOCK:
        COUNTER[0] += 1
        return "%s_%d" % (prefix, COUNTER[0])


def record(entry):
    with RECORD_LOCK:
        with open(RECORD_PATH, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def load_script():
    with open(SCRIPT_PATH, encoding="utf-8") as f:
        return json.load(f)


def step_for(results):
    steps = load_script().get("steps", [])
    if results < len(steps):
        return results, steps[results]
    return results, None


def final_text():
    return load_script().get("final", "done")


# --- Anthropic -------------------------------------------------------------


def anthropic_tool_results(body):
    n = 0
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, list):
            n += sum(1 for b in c if isinstance(b, dict) and b.get("type") == "tool_result")
    return n


def anthropic_blocks(step):
    if step is None:
        return [{"type": "text", "text": final_text()}], "end_turn"
    return [
        {
            "type": "tool_use",
            "id": next_id("toolu"),
            "name": step["name"],
            "input": step.get("args", {}),
        }
    ], "tool_use"


def anthropic_sse(body, blocks, stop):
    msg = {
        "id": next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-test"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events = [("message_start", {"type": "message_start", "message": msg})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}},
                )
            )
        else:
            start = dict(b)
            start["input"] = {}
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start})
            )
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])},
                    },
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join("event: %s\ndata: %s\n\n" % (e, json.dumps(d)) for e, d in events)


def anthropic_json(body, blocks, stop):
    return {
        "id": next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-test"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


# --- OpenAI Responses ------------------------------------------------------


def responses_tool_results(body):
    items = body.get("input", [])
    if not isinstance(items, list):
        return 0
    kinds = ("function_call_output", "custom_tool_call_output")
    return sum(1 for it in items if isinstance(it, dict) and it.get("type") in kinds)


def responses_sse(step):
    rid = next_id("resp")
    if step is None:
        item = {
            "type": "message",
            "role": "assistant",
            "id": next_id("msg"),
            "status": "completed",
            "content": [{"type": "output_text", "text": final_text(), "annotations": []}],
        }
    elif "custom" in step:
        item = {
            "type": "custom_tool_call",
            "id": next_id("ctc"),
            "status": "completed",
            "call_id": next_id("call"),
            "name": step["name"],
            "input": step["custom"],
        }
    else:
        item = {
            "type": "function_call",
            "id": next_id("fc"),
            "status": "completed",
            "call_id": next_id("call"),
            "name": step["name"],
            "arguments": json.dumps(step.get("args", {})),
        }
        if "namespace" in step:
            item["namespace"] = step["namespace"]
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events = [
        {"type": "response.created", "response": {"id": rid}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": rid, "usage": usage}},
    ]
    return "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)


# --- Gemini ----------------------------------------------------------------


def gemini_tool_results(body):
    n = 0
    for c in body.get("contents", []):
        for p in c.get("parts", []) or []:
            if isinstance(p, dict) and "functionResponse" in p:
                n += 1
    return n


def gemini_chunk(parts):
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-test",
    }


def gemini_parts(step):
    if step is None:
        return [{"text": final_text()}]
    return [{"functionCall": {"name": step["name"], "args": step.get("args", {})}}]


# Gemini's side calls (model router, next-speaker check, loop detection) ask
# for JSON; one object answers all of them: route to the default model, the
# user speaks next, no loop.
GEMINI_SIDE_JSON = {
    "reasoning": "scripted",
    "model_choice": "flash",
    "complexity_reasoning": "scripted",
    "complexity_score": 10,
    "next_speaker": "user",
    "unproductive_state_confidence": 0.0,
    "unproductive_state_analysis": "none",
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _send(self, status, ctype, payload):
        data = payload.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _sse(self, payload):
        data = payload.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        start = time.time()
        record({"start": start, "end": time.time(), "method": "GET", "path": self.path, "body": None, "main": False})
        self._send(404, "application/json", json.dumps({"error": {"message": "not found"}}))

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        start = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        entry = {"start": start, "method": "POST", "path": self.path, "body": body, "main": False, "step": None}
        try:
            self._dispatch(path, body, entry)
        finally:
            entry["end"] = time.time()
            record(entry)

    def _dispatch(self, path, body, entry):
        if path.endswith("/messages/count_tokens"):
            self._send(200, "application/json", json.dumps({"input_tokens": 10}))
            return
        if path.endswith("/messages"):
            main = bool(body.get("tools"))
            entry["main"] = main
            if main:
                k, step = step_for(anthropic_tool_results(body))
                entry["step"] = k
            else:
                step = None
            blocks, stop = anthropic_blocks(step)
            if not main:
                blocks = [{"type": "text", "text": "ok"}]
            if body.get("stream"):
                self._sse(anthropic_sse(body, blocks, stop))
            else:
                self._send(200, "application/json", json.dumps(anthropic_json(body, blocks, stop)))
            return
        if path.endswith("/responses"):
            main = bool(body.get("tools"))
            entry["main"] = main
            k, step = step_for(responses_tool_results(body)) if main else (None, None)
            entry["step"] = k
            self._sse(responses_sse(step))
            return
        if ":streamGenerateContent" in path or ":generateContent" in path:
            main = bool(body.get("tools"))
            entry["main"] = main
            if main:
                k, step = step_for(gemini_tool_results(body))
                entry["step"] = k
                parts = gemini_parts(step)
            else:
                parts = [{"text": json.dumps(GEMINI_SIDE_JSON)}]
            if ":streamGenerateContent" in path:
                self._sse("data: %s\n\n" % json.dumps(gemini_chunk(parts)))
            else:
                self._send(200, "application/json", json.dumps(gemini_chunk(parts)))
            return
        self._send(404, "application/json", json.dumps({"error": {"message": "no such endpoint: " + path}}))


def main():
    global SCRIPT_PATH, RECORD_PATH
    SCRIPT_PATH = sys.argv[1]
    RECORD_PATH = sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
