"""A deliberately broken MCP server speaking raw JSON-RPC over stdio.

Tools: `ok` answers properly; `broken_reply` answers with a truncated,
unparsable line (and never a proper reply); `wrong_shape` answers with a
result whose `content` is not a list.
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOLS = [
    {"name": name, "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}}
    for name in ("ok", "broken_reply", "wrong_shape")
]

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    mid = message.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "broken_reply":
            sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"te\n' % json.dumps(mid))
            sys.stdout.flush()
        elif name == "wrong_shape":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": "not a list"}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": "fine"}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": "method not found"}})
