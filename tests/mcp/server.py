"""A test MCP server on the Python reference SDK (`mcp` on PyPI).

    python3 server.py stdio
    python3 server.py http     # Streamable HTTP on 127.0.0.1, prints "PORT <n>"
    python3 server.py sse      # legacy SSE on 127.0.0.1, prints "PORT <n>"

Environment: MCP_TEST_DIR (a directory for markers the tests read),
MCP_TEST_TOOLS (add that many extra tools t0000…), MCP_TEST_REQUIRE_HEADER
("Name: value": refuse HTTP requests without it).
"""

import os
import socket
import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("reasonix-test")
state = {"memory": None, "calls": 0}
DIR = os.environ.get("MCP_TEST_DIR", ".")

READ_ONLY = ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True)


def mark(name: str) -> int:
    """Append a line to a marker file; return how many lines it has now."""
    path = os.path.join(DIR, name)
    with open(path, "a") as f:
        f.write("x\n")
    with open(path) as f:
        return len(f.readlines())


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def remember(value: str) -> str:
    """Keep a value in this server process."""
    state["memory"] = value
    return "remembered"


@server.tool(annotations=READ_ONLY)
def recall() -> str:
    """Return the value kept by remember, and this process id."""
    return f"{state['memory']} (pid {os.getpid()})"


@server.tool(annotations=READ_ONLY)
def flaky_read() -> str:
    """Read-only: the first call ever kills the server; later calls answer."""
    if mark("flaky_read") == 1:
        os._exit(3)
    return f"read after restart (pid {os.getpid()})"


@server.tool(annotations=DESTRUCTIVE)
def flaky_write() -> str:
    """Destructive: every call is counted; the first one kills the server."""
    if mark("flaky_write") == 1:
        os._exit(3)
    return "written"


@server.tool(annotations=READ_ONLY)
async def hang() -> str:
    """Never answers; notes a cancellation in the marker directory."""
    mark("hang_started")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        mark("hang_cancelled")
        raise
    return "unreachable"


@server.tool(annotations=READ_ONLY, structured_output=False)
def big(megabytes: float) -> str:
    """A text result of about this many megabytes."""
    return "x" * int(megabytes * 1_000_000)


@server.tool(annotations=DESTRUCTIVE)
def wipe() -> str:
    """Destructive on purpose."""
    mark("wipe")
    return "wiped"


@server.tool()
def unhinted() -> str:
    """No annotations at all."""
    mark("unhinted")
    return "ran"


@server.tool(annotations=READ_ONLY)
def spawn_child() -> str:
    """Start a grandchild process that would outlive a careless host."""
    pid = os.fork()
    if pid == 0:
        os.execvp("sleep", ["sleep", "300"])
    with open(os.path.join(DIR, "grandchild.pid"), "w") as f:
        f.write(str(pid))
    return str(pid)


@server.tool(annotations=READ_ONLY)
def noisy() -> str:
    """Writes non-JSON lines to stdout (stdio) before answering."""
    sys.stdout.write("this is not json\n{\"jsonrpc\": broken\n")
    sys.stdout.flush()
    return "answered after noise"


for i in range(int(os.environ.get("MCP_TEST_TOOLS", "0"))):
    def tool(i=i) -> str:
        return f"tool {i}"
    server.add_tool(tool, name=f"t{i:04d}", description=f"generated tool {i}",
                    annotations=READ_ONLY)


def serve_http(kind: str) -> None:
    import uvicorn

    app = server.streamable_http_app() if kind == "http" else server.sse_app()
    required = os.environ.get("MCP_TEST_REQUIRE_HEADER")
    if required:
        name, value = [p.strip() for p in required.split(":", 1)]
        inner = app

        async def app(scope, receive, send):  # noqa: F811
            if scope["type"] == "http":
                headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
                if headers.get(name.lower()) != value:
                    await send({"type": "http.response.start", "status": 401,
                                "headers": [(b"content-type", b"text/plain")]})
                    await send({"type": "http.response.body", "body": b"missing header"})
                    return
            await inner(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the port is announced: a client may connect at once
    # (uvicorn accepts from the backlog when it starts serving).
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    kind = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if kind == "stdio":
        server.run("stdio")
    else:
        serve_http(kind)
