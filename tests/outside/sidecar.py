#!/usr/bin/env python3
"""Independent Extension Protocol v2 sidecar written from the specification
(standard library only). Behaviour is chosen by OUTSIDE_MODE (manifest env);
every raw line the host writes, and every frame we send, is appended to
OUTSIDE_LOG as JSON so the Rust test can check the host against the spec."""
import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

MODE = set(filter(None, os.environ.get("OUTSIDE_MODE", "good").split(",")))
LOG = os.environ.get("OUTSIDE_LOG", "/dev/null")
NEXT_ID = [1]
INIT = {}
STDIN = sys.stdin.buffer
STDOUT = sys.stdout.buffer


def log(kind, **fields):
    fields["kind"] = kind
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields) + "\n")


def send(obj, raw=None):
    line = raw if raw is not None else json.dumps(obj, separators=(",", ":"))
    end = "\r\n" if "crlf" in MODE else "\n"
    if "crlf" in MODE:
        STDOUT.write(b"\n  \r\n")  # blank lines the host must ignore
    STDOUT.write(line.encode() + end.encode())
    STDOUT.flush()
    log("sent", line=line[:2000])


def read_frame():
    while True:
        raw = STDIN.readline()
        if not raw:
            return None
        text = raw.decode("utf-8")
        log("recv", raw=text[:200000], nl=text.endswith("\n"))
        stripped = text.strip()
        if stripped:
            return json.loads(stripped)


def request(method, params):
    """E->H request; answers to other frames that arrive meanwhile are queued."""
    rid = NEXT_ID[0]
    NEXT_ID[0] += 1
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    pending = []
    while True:
        msg = read_frame()
        if msg is None:
            sys.exit(0)
        if "method" not in msg and msg.get("id") == rid:
            log("answer", method=method, msg=msg)
            return msg, pending
        pending.append(msg)


def read_ref(ref):
    data, offset = b"", 0
    while True:
        msg, _ = request("host/content/read", {"contentRef": ref, "offset": offset})
        res = msg["result"]
        data += base64.b64decode(res["dataBase64"])
        if "nextOffset" not in res:
            return data, res
        offset = res["nextOffset"]


def init_result(params):
    m = params.get("manifest", {})
    res = {"protocolVersion": "2", "name": "outside", "version": "0.0.1",
           "stateSchemaVersion": 0}
    if m.get("intercepts"):
        res["subscriptions"] = m["intercepts"]
    if m.get("replaces"):
        res["replaces"] = m["replaces"]
    if m.get("tools"):
        res["tools"] = m["tools"]
    pid = os.environ.get("REASONIX_PLUGIN_NAME", "")
    if "provider" in MODE or "provider_gap" in MODE:
        res["providers"] = [{"ref": "plugin/%s/echo" % pid, "model": "m1"}]
    if "undeclared_tool" in MODE:
        res["tools"] = ["not_in_manifest"]
    if "undeclared_provider" in MODE:
        res["providers"] = [{"ref": "plugin/someone-else/x"}]
    if "undeclared_ui" in MODE:
        res["uiActions"] = [{"actionId": "go"}]
    if "extra_fields" in MODE:
        res["bogus"] = True
    return res


def decide(params):
    event = params["event"]
    payload = params.get("payload")
    if params.get("externalized"):
        desc = params["externalized"][0]
        data, last = read_ref(desc["contentRef"])
        log("ref", desc=desc, length=len(data),
            sha=hashlib.sha256(data).hexdigest(), last={k: v for k, v in last.items() if k != "dataBase64"})
        payload = json.loads(data)
        if "content_ref" in MODE and event == "input.receive":
            return {"decision": "replace",
                    "replacement": {"text": "outside saw %d bytes sha %s" % (len(data), hashlib.sha256(data).hexdigest())}}
    if event != "input.receive":
        return {"decision": "continue"}
    if "block_secret" in MODE:
        return {"decision": "block",
                "reason": "blocked with token sk-outsideSECRETabcdefghijklmnop1234 and ghp_abcdefghijklmnopqrstuvwxyz0123456789"}
    if "bad_replacement" in MODE:
        return {"decision": "replace", "replacement": {"text": "x", "unexpected": 1}}
    if "empty_replacement" in MODE:
        return {"decision": "replace", "replacement": {"text": ""}}
    if "allow_input" in MODE:
        return {"decision": "allow"}
    if "replace_good" in MODE:
        return {"decision": "replace", "replacement": {"text": "REPLACED:" + payload.get("text", "")}}
    return {"decision": "continue"}


def daemonize():
    """Start a daemon the classic way (fork, setsid, fork, parent exits): it
    leaves our session and process group and loses its parent. Its pid is
    logged as a grandchild, so the test checks it is gone after the run."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.setsid()
        pid2 = os.fork()
        if pid2 == 0:
            os.close(w)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(60)
        os.write(w, str(pid2).encode())
        os._exit(0)
    os.close(w)
    daemon = int(os.read(r, 32))
    os.close(r)
    os.waitpid(pid, 0)
    log("grandchild", pid=daemon, daemon=True)


def handle(msg):
    method = msg.get("method")
    rid = msg.get("id")
    params = msg.get("params", {})
    if method is None:
        log("unexpected_response", msg=msg)
        return
    if method == "extension/initialize":
        INIT.update(params)
        if "daemon_init" in MODE:
            daemonize()
        if "early_request" in MODE:
            ans, _ = request("host/ui/publish", {"surfaceId": "s", "sessionId": params["session"]["sessionId"],
                                                 "generation": params["session"]["generation"], "kind": "status",
                                                 "payload": {"label": "early"}})
        result = init_result(params)
        send({"jsonrpc": "2.0", "id": rid, "result": result})
        if "huge_line" in MODE:
            pad = "x" * (9 * 1024 * 1024)
            send(None, raw='{"jsonrpc":"2.0","method":"extension/provider/stream/end","params":{"streamId":"%s","lastSeq":0}}' % pad)
        return
    if method == "extension/initialized":
        log("initialized")
        if "stale_ui" in MODE:
            s = INIT["session"]
            ans, pend = request("host/ui/publish", {"surfaceId": "s", "sessionId": s["sessionId"],
                                                     "generation": s["generation"] + 7, "kind": "status",
                                                     "payload": {"label": "stale"}})
            for p in pend:
                handle(p)
        if "grandchild" in MODE:
            child = subprocess.Popen([sys.executable, "-c",
                                      "import signal,time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            log("grandchild", pid=child.pid)
        return
    if method == "extension/shutdown":
        log("shutdown", params=params)
        if "ignore_shutdown" in MODE:
            return
        send({"jsonrpc": "2.0", "id": rid, "result": {"accepted": True}})
        return
    if method == "extension/intercept":
        if "daemon_intercept" in MODE:
            daemonize()
        if "exit_mid" in MODE:
            log("exiting")
            os._exit(3)
        if "hang" in MODE:
            log("hanging")
            while True:
                time.sleep(60)
        if "bad_ref" in MODE:
            request("host/content/read", {"contentRef": "content_000000000000000000000000", "offset": 0})
        if "unknown_reply" in MODE:
            send({"jsonrpc": "2.0", "id": 4242, "result": {"decision": "continue"}})
        result = decide(params)
        if "float_id" in MODE:
            send(None, raw='{"jsonrpc":"2.0","id":%d.0,"result":%s}' % (rid, json.dumps(result, separators=(",", ":"))))
            return
        if "extra_answer_field" in MODE:
            result["surplus"] = "x"
        send({"jsonrpc": "2.0", "id": rid, "result": result})
        return
    if method == "extension/event":
        return
    if method == "extension/tool/call":
        send({"jsonrpc": "2.0", "id": rid,
              "result": {"content": "outside tool %s got %s" % (params["name"], json.dumps(params["arguments"], sort_keys=True))}})
        return
    if method == "extension/provider/catalog":
        pid = os.environ.get("REASONIX_PLUGIN_NAME", "")
        send({"jsonrpc": "2.0", "id": rid, "result": {"providers": [{"ref": "plugin/%s/echo" % pid, "model": "m1"}]}})
        return
    if method == "extension/provider/stream/open":
        sid = params["streamId"]
        send({"jsonrpc": "2.0", "id": rid, "result": {"accepted": True}})

        def chunk(seq, text):
            send({"jsonrpc": "2.0", "method": "extension/provider/stream/chunk",
                  "params": {"streamId": sid, "seq": seq, "chunk": {"type": "text", "text": text}}})
        if "provider_gap" in MODE:
            chunk(1, "a")
            chunk(3, "c")
        else:  # out of order plus duplicates; the host must reassemble "abc"
            chunk(2, "b")
            chunk(1, "a")
            chunk(1, "a")
            chunk(3, "c")
            chunk(2, "b")
        send({"jsonrpc": "2.0", "method": "extension/provider/stream/end",
              "params": {"streamId": sid, "lastSeq": 3}})
        return
    if method == "extension/provider/stream/cancel":
        send({"jsonrpc": "2.0", "id": rid, "result": {"cancelled": False}})
        return
    if rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found",
                                                    "data": {"reason": "unknown_method", "retryable": False}}})


def main():
    if "ignore_shutdown" in MODE:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    log("start", pid=os.getpid(), env={k: v for k, v in os.environ.items() if k.startswith("REASONIX_") or k.startswith("OUTSIDE_")})
    if "stderr_secret" in MODE:
        sys.stderr.write("debug Authorization: Bearer sk-outsideSTDERRsecretabcdefghijkl9876\n")
        sys.stderr.flush()
    if "no_stdin" in MODE:
        while True:
            time.sleep(60)
    while True:
        msg = read_frame()
        if msg is None:
            log("eof")
            return
        handle(msg)


if __name__ == "__main__":
    main()
