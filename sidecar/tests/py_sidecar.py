"""A tiny Python sidecar for negative transport cases.

argv[1]:
  string-id-request  handshake, then on an intercept send the host a request
                     with a string id, and answer the intercept with a block
                     whose reason reports the host's answer code and id.
  null-result        answer initialize with "result": null.
  trailing-garbage   answer initialize with a valid frame followed by junk on
                     the same line (unparsable as one JSON value).
  crlf               a well-behaved sidecar that ends lines with CRLF, pads
                     them with spaces and sends blank lines between frames.
"""
import json
import sys


CRLF = sys.argv[1] == "crlf"


def send(obj):
    line = json.dumps(obj, separators=(",", ":"))
    if CRLF:
        line = "\r\n  \r\n\n " + line + " \t\r"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def read():
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        if line.strip():
            return json.loads(line)


INIT = {"protocolVersion": "2", "name": "py", "version": "0.1.0",
        "stateSchemaVersion": 0, "subscriptions": ["tool.before"]}

mode = sys.argv[1]
init = read()
if mode == "null-result":
    send({"jsonrpc": "2.0", "id": init["id"], "result": None})
    read()
    sys.exit(0)
if mode == "trailing-garbage":
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": INIT}) + " junk\n")
    sys.stdout.flush()
    print("sent trailing garbage; host answered %s" % json.dumps(read()), file=sys.stderr)
    sys.stderr.flush()
    # Never answer properly: the handshake must time out.
    while sys.stdin.readline():
        pass
    sys.exit(0)

send({"jsonrpc": "2.0", "id": init["id"], "result": INIT})
assert read()["method"] == "extension/initialized"
while True:
    msg = read()
    if msg.get("method") == "extension/shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"accepted": True}})
        sys.exit(0)
    if msg.get("method") == "extension/intercept" and CRLF:
        send({"jsonrpc": "2.0", "id": msg["id"],
              "result": {"decision": "block", "reason": "crlf ok"}})
    elif msg.get("method") == "extension/intercept":
        send({"jsonrpc": "2.0", "id": "7", "method": "host/content/read",
              "params": {"contentRef": "content_000000000000000000000000", "offset": 0}})
        answer = read()
        reason = "%s/%s" % (answer.get("error", {}).get("code"), answer.get("id"))
        send({"jsonrpc": "2.0", "id": msg["id"],
              "result": {"decision": "block", "reason": reason}})
