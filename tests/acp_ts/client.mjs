// The TypeScript ACP reference SDK (@agentclientprotocol/sdk) as an
// independent client of `reasonix acp`: it starts the agent, drives one
// session and prints what it saw as one JSON object on stdout. The Rust
// test tests/acp_typescript.rs sets up the home and checks the report.
//
// Environment: REASONIX (the binary), REASONIX_HOME, WORKSPACE.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const { REASONIX, WORKSPACE } = process.env;
const LIMIT_MS = 120_000;
// The echo model asks for this call in every turn, so every turn waits on
// a permission question: a sure mid-turn moment.
const CALL = 'write_file={"path":"made.txt","content":"x"}';

const agent = spawn(REASONIX, ["acp", "--call", CALL], {
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => agent.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(
  Writable.toWeb(agent.stdin),
  Readable.toWeb(agent.stdout),
);

const updates = [];
const reloadsApplied = [];
const surfaces = [];
const permissions = [];
let changed = () => {};

function waitFor(predicate, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), LIMIT_MS);
    const check = () => {
      if (predicate()) {
        clearTimeout(timer);
        changed = () => {};
        resolve();
      } else {
        changed = check;
      }
    };
    check();
  });
}

const allowOnce = { outcome: { outcome: "selected", optionId: "allow-once" } };
// What to do when the agent asks a permission (set per turn below).
let onPermission = async () => allowOnce;

const app = acp
  .client({ name: "reasonix-ts-reference-test" })
  .onNotification("session/update", (ctx) => {
    updates.push(ctx.params);
    changed();
  })
  .onNotification("_reasonix.io/session/reloadApplied", (p) => p, (ctx) => {
    reloadsApplied.push(ctx.params);
    changed();
  })
  .onNotification("_reasonix.io/extensionSurface", (p) => p, (ctx) => {
    surfaces.push(ctx.params);
    changed();
  })
  .onRequest("session/request_permission", async (ctx) => {
    permissions.push(ctx.params);
    return onPermission(ctx);
  });

/** The agent's message text of the updates from `from` on. */
function textFrom(from) {
  return updates
    .slice(from)
    .filter((u) => u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text)
    .join("");
}

const report = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { _meta: { "reasonix.extensionSurface": true } },
    clientInfo: { name: "reasonix-ts-reference-test", version: "1.0.0" },
  });
  const session = await ctx.request("session/new", { cwd: WORKSPACE, mcpServers: [] });
  const sessionId = session.sessionId;
  await waitFor(
    () => updates.some((u) => u.update.sessionUpdate === "available_commands_update"),
    "available_commands_update",
  );
  const commands = updates
    .filter((u) => u.update.sessionUpdate === "available_commands_update")
    .at(-1)
    .update.availableCommands.map((c) => c.name);

  // Turn 1: the starter rewrites the input, the echo model answers it.
  let from = updates.length;
  const first = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "hello from node" }],
  });
  const firstText = textFrom(from);

  // Turn 2: while it waits on the permission question, ask for a reload;
  // then let the turn finish, and the queued reload runs.
  let reloadAnswer = null;
  onPermission = async (pctx) => {
    reloadAnswer = await pctx.agent.request("_reasonix.io/session/reloadExtensions", {
      sessionId,
    });
    return allowOnce;
  };
  const second = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "reload meanwhile" }],
  });
  onPermission = async () => allowOnce;
  await waitFor(() => reloadsApplied.length > 0, "_reasonix.io/session/reloadApplied");

  // Turn 3: the session's status shows the new generation.
  from = updates.length;
  const third = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "/status" }],
  });
  const statusText = textFrom(from);

  return {
    protocolVersion: init.protocolVersion,
    loadSession: init.agentCapabilities?.loadSession ?? false,
    sessionId,
    models: session.configOptions?.[0]?.options?.map((o) => o.value) ?? [],
    commands,
    firstStop: first.stopReason,
    firstText,
    secondStop: second.stopReason,
    reloadAnswer,
    reloadsApplied,
    thirdStop: third.stopReason,
    statusText,
    permissions: permissions.length,
    surfaces: surfaces.map((s) => ({
      plugin: s.plugin,
      surfaceId: s.surfaceId,
      kind: s.kind,
      generation: s.generation,
      label: s.payload?.label ?? null,
    })),
    updateKinds: [...new Set(updates.map((u) => u.update.sessionUpdate))],
  };
});

agent.stdin.end();
report.exitCode = await exited;
process.stdout.write(JSON.stringify(report) + "\n");
