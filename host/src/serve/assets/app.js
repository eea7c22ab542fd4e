// The plugins page of `reasonix serve`, and its chat panel. It uses the same
// routes and token as any client. Text from packages is only ever set as textContent (never
// parsed as HTML), after control and bidi characters are made visible.
"use strict";

const TOKEN_KEY = "reasonix-serve-token";

// The token arrives in the URL fragment (never sent to a server); keep it
// for this tab only and take it out of the address bar.
function readToken() {
  const m = /^#token=([0-9a-f]{64})$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, m[1]);
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}
const token = readToken();

// Control characters (but newline and tab) and bidi overrides become
// visible escapes, so package text cannot restyle or reorder what is shown.
function clean(value) {
  if (value === null || value === undefined) return "";
  return String(value).replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => "\\u{" + c.codePointAt(0).toString(16) + "}",
  );
}

// el("div.cls#id", {attr: v}, child, …): children are nodes or text.
function el(spec, attrs, ...children) {
  const m = /^([a-z0-9]+)((?:[.#][\w-]+)*)$/.exec(spec);
  const node = document.createElement(m[1]);
  for (const part of m[2].match(/[.#][\w-]+/g) || []) {
    if (part[0] === ".") node.classList.add(part.slice(1));
    else node.id = part.slice(1);
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(clean(child)));
  }
  return node;
}

function message(text, kind) {
  const box = document.getElementById("messages");
  const node = el("div.msg", { role: kind === "error" ? "alert" : "status" }, text);
  if (kind) node.classList.add(kind);
  box.prepend(node);
  while (box.children.length > 4) box.lastChild.remove();
}

function describeError(body, status) {
  if (body && body.code) {
    const detail = body.params && body.params.detail && body.params.detail !== body.error
      ? "\n" + body.params.detail : "";
    const next = body.params && body.params.next ? "\nnext: " + body.params.next : "";
    return body.code + ": " + body.error + detail + next;
  }
  return "HTTP " + status;
}

class ApiError extends Error {
  constructor(text, status, code) {
    super(text);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body, signal) {
  const headers = { Authorization: "Bearer " + token };
  const init = { method, headers, signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) {
    let parsed = null;
    try { parsed = await res.json(); } catch (_) { /* not JSON */ }
    throw new ApiError(describeError(parsed, res.status), res.status, parsed && parsed.code);
  }
  return res;
}

async function apiJSON(method, path, body) {
  return (await api(method, path, body)).json();
}

function reloadNote(answer) {
  if (!answer || !answer.reloadError) return;
  if (/turn is running/.test(answer.reloadError)) {
    // Serve refuses a reload while a turn runs: retry once the chat is idle.
    chat.reloadPending = true;
    message("Saved. A turn is running, so the runtime reloads once it ends.", "ok");
  } else {
    message("Saved, but the runtime was not reloaded: " + answer.reloadError, "error");
  }
}

function dl(pairs) {
  const list = el("dl.kv");
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0)) continue;
    list.append(el("dt", null, k), el("dd", null, Array.isArray(v) ? v.join(", ") : String(v)));
  }
  return list;
}

// The prominent block for a package that runs code.
function trustBlock(rt) {
  if (!rt) return null;
  const list = (v) => (v && v.length ? v.join(", ") : "-");
  const command = [rt.command].concat(rt.args || []).join(" ");
  if (rt.sandbox) {
    return el("div.trust.sandboxed", null,
      el("div.title", null, "SANDBOXED"),
      el("div", null, "Runs a WebAssembly component inside Reasonix's sandbox: it sees the payloads of the points it intercepts and may block or rewrite them, but may only tighten permission decisions."),
      dl([["command", command], ["plugin root", rt.sandbox.pluginRoot], ["data dir", rt.sandbox.dataDir],
        ["environment", list(rt.sandbox.env)], ["network", rt.sandbox.network ? "yes" : "none"],
        ["memory limit", rt.sandbox.memoryMiB + " MiB"], ["intercepts", list(rt.intercepts)],
        ["replaces", list(rt.replaces)], ["capabilities", list(rt.capabilities)], ["tools", list(rt.tools)]]));
  }
  return el("div.trust.full", null,
    el("div.title", null, "FULL TRUST"),
    el("div", null, "Runs a code extension outside any sandbox with your full environment: it can read the whole session, bypass permissions and operate this machine."),
    dl([["command", command], ["intercepts", list(rt.intercepts)], ["replaces", list(rt.replaces)],
      ["capabilities", list(rt.capabilities)], ["tools", list(rt.tools)]]));
}

function warningsBlock(warnings) {
  if (!warnings || !warnings.length) return null;
  return el("ul.warnings", null, warnings.map((w) => el("li", null, w)));
}

function itemsBlock(title, items, fmt) {
  if (!items || !items.length) return null;
  return el("div", null, el("div.muted", null, title + " (" + items.length + ")"),
    el("ul.items", null, items.map((i) => el("li", null, fmt(i)))));
}

function contributions(p) {
  const named = (i) => [i.invocation || i.name, i.description ? " — " + i.description : ""].join("");
  return [
    itemsBlock("skills", p.skills, named),
    itemsBlock("commands", p.commands, (i) => named(Object.assign({}, i, {
      invocation: (i.invocation || i.name) + (i.argumentHint ? " " + i.argumentHint : ""),
    }))),
    itemsBlock("prompts", p.prompts, named),
    itemsBlock("agents", p.agents, named),
    itemsBlock("themes", p.themes, (i) => i.invocation + " (" + i.path + ")" + (i.rejected ? " — rejected: " + i.rejected : "")),
    itemsBlock("hooks", p.hooks, (h) => h.event + " match=" + (h.match || "*") + " " + (h.command || ("contextFile " + (h.contextFile || ""))) + (h.description ? " — " + h.description : "")),
    itemsBlock("MCP servers", p.mcpServers, (m) => m.name + " (" + m.transport + ") " + (m.command || m.url || "") + (m.autoStart ? "" : " [not auto-started]")),
  ];
}

// ---- installed packages -------------------------------------------------

async function loadPlugins() {
  const box = document.getElementById("plugins");
  let plugins;
  try {
    plugins = await apiJSON("GET", "/plugins");
  } catch (e) {
    box.replaceChildren(el("p.error-line", null, e.message));
    return;
  }
  if (!plugins.length) {
    box.replaceChildren(el("p.muted#no-plugins", null, "No plugins installed."));
    return;
  }
  box.replaceChildren(...plugins.map(pluginCard));
}

function pluginCard(p) {
  const toggle = el("button.small", {
    type: "button", "data-action": p.enabled ? "disable" : "enable",
    onclick: () => act(() => setEnabled(p.name, !p.enabled)),
  }, p.enabled ? "Disable" : "Enable");
  const exportBtn = el("button.small", { type: "button", "data-action": "export", onclick: () => act(() => exportPlugin(p.name)) }, "Export");
  const remove = el("button.small.danger", { type: "button", "data-action": "remove" }, "Remove");
  remove.addEventListener("click", () => {
    if (remove.dataset.armed) {
      act(() => removePlugin(p.name));
    } else {
      remove.dataset.armed = "1";
      remove.textContent = "Confirm remove";
      remove.setAttribute("data-action", "confirm-remove");
    }
  });
  return el("div.plugin", { "data-name": p.name, "data-state": p.state },
    el("div.head", null,
      el("span.name", null, p.name),
      el("span.muted", null, p.version || ""),
      el("span.badge." + p.state.replace(/[^\w-]/g, ""), { "data-role": "state" }, p.state),
      p.compatibility ? el("span.badge", null, "compatibility: " + p.compatibility) : null,
      el("span.actions", null, toggle, exportBtn, remove)),
    p.description ? el("div", null, p.description) : null,
    p.error ? el("div.error-line", { "data-role": "error" }, p.error) : null,
    dl([["source", p.source], ["mode", p.mode], ["kind", p.manifestKind], ["root", p.root],
      ["commit", p.commit], ["status", p.statusReason]]),
    trustBlock(p.runtime),
    degradedLine(p),
    ...contributions(p),
    p.skipped && p.skipped.length ? itemsBlock("skipped", p.skipped, (s) => s.capability + (s.path ? " " + s.path : "") + ": " + s.reason) : null,
    warningsBlock(p.warnings));
}

function degradedLine(p) {
  const degraded = runtimeStatus && runtimeStatus.degraded.find((d) => d.plugin === p.name);
  if (!degraded || !p.enabled) return null;
  return el("div.error-line", { "data-role": "degraded" }, "Its runtime is not running: " + degraded.why);
}

async function setEnabled(name, enabled) {
  const answer = await apiJSON("POST", "/plugins/enabled", { name, enabled });
  message((enabled ? "Enabled " : "Disabled ") + name, "ok");
  reloadNote(answer);
}

async function removePlugin(name) {
  const answer = await apiJSON("DELETE", "/plugins/" + encodeURIComponent(name));
  if (answer.ok) message("Removed " + name, "ok");
  else message((answer.error || answer.status) + (answer.next ? "\nnext: " + answer.next : ""), "error");
  reloadNote(answer);
}

async function exportPlugin(name) {
  const res = await api("GET", "/plugins/" + encodeURIComponent(name) + "/export");
  const blob = await res.blob();
  const env = res.headers.get("X-Reasonix-Required-Env");
  const link = el("a", { href: URL.createObjectURL(blob), download: name + ".zip" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60000);
  message("Exported " + name + ".zip (" + blob.size + " bytes); required environment variables: " + (env || "none"), "ok");
}

// ---- install: plan first, then exactly that plan ------------------------

let planned = null;

async function planInstall(ev) {
  ev.preventDefault();
  const request = {
    source: document.getElementById("source").value.trim(),
    link: document.getElementById("install-link").checked,
    replace: document.getElementById("install-replace").checked,
  };
  const name = document.getElementById("install-name").value.trim();
  if (name) request.name = name;
  const box = document.getElementById("plan");
  box.hidden = false;
  box.replaceChildren(el("p.muted", null, "Reading " + request.source + " …"));
  planned = null;
  try {
    const plan = await apiJSON("POST", "/plugins/plan", request);
    planned = { request, plan };
    box.replaceChildren(planCard(plan));
  } catch (e) {
    box.replaceChildren(el("p.error-line", { "data-role": "plan-error" }, e.message));
  }
}

function planCard(plan) {
  const risk = (plan.planId || "").split(":")[0] || "low";
  const installable = plan.ok && plan.status === "planned" && plan.actions.length > 0;
  const card = el("div.plan-card", { "data-status": plan.status },
    el("div.head", null,
      el("strong", null, "Plan: " + plan.status),
      el("span.badge." + risk, { id: "plan-risk" }, "risk: " + risk)),
    dl([["planId", plan.planId], ["contentDigest", plan.contentDigest || "(not pinnable: link mode or unpinned material)"],
      ["source", plan.source], ["mode", plan.mode]]),
    plan.error ? el("div.error-line", null, plan.error) : null,
    ...plan.actions.map(actionBlock),
    warningsBlock(plan.warnings),
    // The backend's `next` speaks CLI; here the button is the next step.
    installable
      ? el("div.muted", null, "Review the risk, the reasons and any FULL TRUST block. Install applies exactly this plan: if the source changes before then, it is refused.")
      : (plan.next ? el("div.muted", null, plan.next) : null));
  card.querySelector("dl dd").id = "plan-id";
  const digest = card.querySelectorAll("dl dd")[1];
  if (digest) digest.id = "content-digest";
  if (installable) {
    card.append(el("div.head", null,
      el("button.primary#install-btn", { type: "button", onclick: () => act(applyPlan) }, "Install"),
      el("button#cancel-plan-btn", { type: "button", onclick: cancelPlan }, "Cancel")));
  }
  return card;
}

function actionBlock(a) {
  // Zero counts are left out of the JSON.
  const n = (v) => v || 0;
  const counts = ["skills " + n(a.skillCount), "commands " + n(a.commandCount), "prompts " + n(a.promptCount),
    "agents " + n(a.agentCount), "hooks " + n(a.hookCount), "MCP servers " + n(a.toolCount), "themes " + n(a.themeCount)];
  return el("div.action", { "data-name": a.name },
    el("div.head", null, el("span.name", null, a.name + " " + (a.version || "")),
      el("span.badge." + a.riskLevel, null, a.riskLevel)),
    el("ul.reasons", null, (a.riskReasons || []).map((r) =>
      el("li" + (/^FULL TRUST/.test(r) ? ".full-trust" : ""), null, r))),
    dl([["kind", a.manifestKind], ["target", a.target], ["compatibility", a.compatibility],
      ["capabilities", counts.join(", ")], ["treeDigest", a.treeDigest], ["commit", a.commit]]),
    trustBlock(a.runtime),
    a.skippedCapabilities && a.skippedCapabilities.length
      ? itemsBlock("skipped", a.skippedCapabilities, (s) => s.capability + ": " + s.reason) : null,
    a.error ? el("div.error-line", null, a.error + " [" + a.errorCode + "]") : null);
}

function cancelPlan() {
  planned = null;
  const box = document.getElementById("plan");
  box.hidden = true;
  box.replaceChildren();
}

async function applyPlan() {
  if (!planned) return;
  const request = Object.assign({}, planned.request, { planId: planned.plan.planId });
  const answer = await apiJSON("POST", "/plugins/install", request);
  const box = document.getElementById("plan");
  if (answer.ok) {
    message("Installed " + answer.actions.map((a) => a.name).join(", "), "ok");
    cancelPlan();
  } else {
    box.replaceChildren(planCard(answer));
    message("Install " + answer.status + ": " + (answer.next || ""), "error");
  }
  reloadNote(answer);
}

// ---- skills and runtime -------------------------------------------------

async function loadSkills() {
  const box = document.getElementById("skill-list");
  let answer;
  try {
    answer = await apiJSON("GET", "/skills");
  } catch (e) {
    box.replaceChildren(el("p.error-line", null, e.message));
    return;
  }
  if (!answer.skills.length) {
    box.replaceChildren(el("p.muted", null, "No skills installed."));
    return;
  }
  box.replaceChildren(el("table.skills", null,
    el("tr", null, el("th", null, "on"), el("th", null, "skill"), el("th", null, "runs as"), el("th", null, "description")),
    answer.skills.map((s) => {
      const box = el("input", { type: "checkbox", "data-skill": s.id, checked: s.enabled });
      box.addEventListener("change", () => act(async () => {
        reloadNote(await apiJSON("POST", "/skills/enabled", { name: s.id, enabled: box.checked }));
      }));
      return el("tr", null, el("td", null, box),
        el("td", null, s.invocation + (s.pluginEnabled ? "" : " (package disabled)")),
        el("td", null, s.runAs), el("td", null, s.description || ""));
    })));
}

let runtimeStatus = null;

async function loadRuntime() {
  const status = await apiJSON("GET", "/extensions");
  runtimeStatus = status;
  const running = status.runtimes.map((r) => r.plugin + " (" + r.trust.replace("_", " ") + ")");
  let text = "runtime: generation " + status.generation + (running.length ? " — " + running.join(", ") : " — no code extensions");
  if (status.bootError) text += " — not started: " + status.bootError;
  if (status.degraded.length) text += " — degraded: " + status.degraded.map((d) => d.plugin).join(", ");
  document.getElementById("runtime-status").textContent = clean(text);
}

async function reloadRuntime() {
  let r;
  try {
    r = await apiJSON("POST", "/extensions/reload");
  } catch (e) {
    if (e.code !== "reload.busy") throw e;
    chat.reloadPending = true;
    message("A turn is running: the runtime reloads once it ends.", "ok");
    return;
  }
  message("Runtime reloaded: generation " + r.fromGeneration + " → " + r.toGeneration, "ok");
  for (const s of r.sessions || []) {
    if (s.status === "failed") message("Session " + s.sessionId + " keeps generation " + s.kept + ": " + s.why, "error");
  }
}

async function refreshAll() {
  // The runtime first: the cards say which runtimes could not start.
  await loadRuntime().catch((e) => message(e.message, "error"));
  await Promise.all([loadPlugins(), loadSkills()]);
}

// Run one user action: errors become a message; the page is then refreshed.
let busy = false;
async function act(work) {
  if (busy) return;
  busy = true;
  document.body.classList.add("busy");
  try {
    await work();
  } catch (e) {
    message(e.message, "error");
  } finally {
    busy = false;
    document.body.classList.remove("busy");
    await refreshAll();
  }
}

// ---- chat: a session over the session routes ---------------------------

const chat = {
  id: null,
  abort: null,
  streaming: null,   // the assistant message being streamed
  busy: false,
  reloadPending: false,
};

function chatLine(cls, ...children) {
  const box = document.getElementById("chat-transcript");
  const node = el("div.chat-msg" + cls, null, ...children);
  box.append(node);
  box.scrollTop = box.scrollHeight;
  return node;
}

function chatError(text) {
  chatLine(".error", text);
}

function setBusy(busy) {
  chat.busy = busy;
  document.getElementById("chat-cancel").disabled = !busy;
}

function showSession(status) {
  document.getElementById("chat-session").textContent = clean(status.sessionId);
  const runtimes = status.runtimes.length ? status.runtimes.join(", ") : "no code extensions";
  document.getElementById("chat-status").textContent = clean(
    "generation " + status.generation + " · model " + status.model + " · runtimes: " + runtimes +
    (status.busy ? " · a turn is running" : ""));
  setBusy(status.busy);
  if (!status.busy) retryReload();
}

// The reload Serve refused while a turn ran, retried once the session is
// idle (after any page action in progress).
function retryReload() {
  if (!chat.reloadPending) return;
  if (busy) {
    setTimeout(retryReload, 250);
    return;
  }
  chat.reloadPending = false;
  act(reloadRuntime);
}

async function openSession() {
  const view = await apiJSON("POST", "/sessions", {});
  chat.id = view.sessionId;
  chat.streaming = null;
  document.getElementById("chat-transcript").replaceChildren();
  document.getElementById("chat-surfaces").replaceChildren();
  document.getElementById("chat-questions").replaceChildren();
  document.getElementById("chat-close").hidden = false;
  showSession(view);
  // Subscribe before anything is submitted: the answer's headers arrive
  // once the server holds the subscription.
  chat.abort = new AbortController();
  const res = await api("GET", "/sessions/" + encodeURIComponent(chat.id) + "/events", undefined, chat.abort.signal);
  readEvents(res, chat.id).catch((e) => {
    if (e.name !== "AbortError") chatError("The event stream broke: " + e.message);
  });
  const detail = await apiJSON("GET", "/sessions/" + encodeURIComponent(chat.id));
  detail.surfaces.forEach(renderSurface);
}

// Server-Sent Events read with fetch (EventSource cannot send the token):
// frames end with a blank line; `event:` names the type, `data:` is JSON.
async function readEvents(res, id) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = null;
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
      }
      if (name && data && chat.id === id) onEvent(name, JSON.parse(data));
    }
  }
}

function endStreaming() {
  chat.streaming = null;
}

function onEvent(name, e) {
  switch (name) {
    case "opened":
    case "status":
      showSession(e.status);
      break;
    case "turn_started":
      endStreaming();
      setBusy(true);
      break;
    case "user_message":
      chatLine(".user", el("span.who", null, "you"), el("span.text", null, e.text));
      break;
    case "context":
      chatLine(".note", "context from " + e.source + ": " + e.text);
      break;
    case "assistant_delta":
      if (!chat.streaming) {
        chat.streaming = el("span.text");
        chatLine(".assistant", el("span.who", null, "assistant"), chat.streaming);
      }
      chat.streaming.append(document.createTextNode(clean(e.text)));
      break;
    case "assistant_message":
      if (chat.streaming) chat.streaming.textContent = clean(e.text);
      else if (e.text) chatLine(".assistant", el("span.who", null, "assistant"), el("span.text", null, e.text));
      endStreaming();
      break;
    case "point":
      if (e.record.steps.length) {
        chatLine(".note", e.record.point + ": " + e.record.steps.map((s) => s.plugin + " " + s.result).join(" → ") +
          (e.record.note ? " (" + e.record.note + ")" : ""));
      }
      break;
    case "hook": {
      const r = e.record;
      if (r.matched === false) break;
      const verdict = r.decision && r.decision.verdict ? " · " + r.decision.verdict : "";
      const reason = r.decision && r.decision.reason ? ": " + r.decision.reason : "";
      chatLine(".note", "hook " + r.event + " (" + r.plugin + "): exit " + r.exitCode + verdict + reason);
      break;
    }
    case "tool_call":
      endStreaming();
      chatLine(".tool", "tool " + e.name + " " + e.arguments);
      break;
    case "tool_result": {
      const r = e.record;
      const result = r.result.length > 400 ? r.result.slice(0, 400) + "…" : r.result;
      chatLine(".tool" + (r.decision === "allow" && !r.isError ? "" : ".refused"),
        "→ " + r.name + ": " + r.decision + (r.decidedBy ? " (" + r.decidedBy + ")" : "") + (result ? " — " + result : ""));
      break;
    }
    case "question":
      renderQuestion(e.id, e.question);
      break;
    case "question_closed": {
      const box = document.querySelector('#chat-questions [data-question="' + e.id + '"]');
      if (box) box.remove();
      break;
    }
    case "surface":
      renderSurface(e.update);
      break;
    case "warning":
      chatLine(".warning", "warning (" + e.source + "): " + e.message);
      break;
    case "reload": {
      const o = e.outcome;
      if (o.status === "swapped") chatLine(".note", "runtime reloaded: generation " + o.fromGeneration + " → " + o.toGeneration);
      else if (o.status === "failed") chatLine(".warning", "reload failed; generation " + o.kept + " keeps serving: " + o.why);
      else chatLine(".note", "reload queued until the turn ends");
      break;
    }
    case "command_output":
      chatLine(".command", el("pre", null, e.text));
      break;
    case "turn_ended": {
      endStreaming();
      const st = e.status;
      if (st.status === "blocked") chatLine(".turn-end.blocked", "blocked at " + st.point + " by " + st.plugin + ": " + st.reason);
      else if (st.status === "failed") chatLine(".turn-end.failed", "failed at " + st.point + ": " + st.error);
      else if (st.status === "cancelled") chatLine(".turn-end.cancelled", "cancelled");
      document.getElementById("chat-questions").replaceChildren();
      break;
    }
    case "closed":
      chatLine(".note", "session closed");
      sessionGone();
      break;
    default:
      break;
  }
}

function sessionGone() {
  if (chat.abort) chat.abort.abort();
  chat.id = null;
  chat.abort = null;
  setBusy(false);
  document.getElementById("chat-close").hidden = true;
  document.getElementById("chat-session").textContent = "";
  document.getElementById("chat-status").textContent = "No session: the next message opens a new one.";
}

// Inputs for form fields; `read()` gives the values.
function fieldInputs(fields) {
  const rows = [];
  const readers = [];
  for (const f of fields) {
    const label = el("span", null, f.label || f.key);
    let input;
    let read;
    if (f.kind === "confirm") {
      input = el("input", { type: "checkbox", "data-key": f.key, checked: f.default === true });
      read = () => input.checked;
    } else if (f.kind === "select") {
      input = el("select", { "data-key": f.key }, (f.options || []).map((o) => el("option", { value: o, selected: f.default === o }, o)));
      read = () => input.value;
    } else if (f.kind === "multiselect") {
      const boxes = (f.options || []).map((o) => el("input", { type: "checkbox", value: o, checked: Array.isArray(f.default) && f.default.includes(o) }));
      input = el("span", { "data-key": f.key }, boxes.map((b, i) => el("label.check", null, b, f.options[i])));
      read = () => boxes.filter((b) => b.checked).map((b) => b.value);
    } else {
      input = el("input", { type: "text", "data-key": f.key, value: typeof f.default === "string" ? f.default : "" });
      read = () => input.value;
    }
    rows.push(el("label.field", null, label, input));
    readers.push([f.key, read]);
  }
  return { rows, read: () => Object.fromEntries(readers.map(([k, r]) => [k, r()])) };
}

async function answerQuestion(id, body) {
  try {
    await apiJSON("POST", "/sessions/" + encodeURIComponent(chat.id) + "/answer", Object.assign({ question: id }, body));
  } catch (e) {
    chatError(e.message);
  }
}

function renderQuestion(id, q) {
  const box = document.getElementById("chat-questions");
  let node;
  if (q.kind === "permission") {
    node = el("div.question", { "data-question": id, "data-kind": "permission" },
      el("div.title", null, "Allow the tool " + q.tool + "?"),
      el("pre", null, q.arguments),
      el("div.head", null,
        el("button.primary", { type: "button", "data-answer": "allow", onclick: () => answerQuestion(id, { allow: true }) }, "Allow"),
        el("button", { type: "button", "data-answer": "always", onclick: () => answerQuestion(id, { allow: true, always: true }) }, "Always allow"),
        el("button.danger", { type: "button", "data-answer": "deny", onclick: () => answerQuestion(id, { allow: false }) }, "Deny")));
  } else {
    const inputs = fieldInputs(q.form.fields);
    node = el("div.question", { "data-question": id, "data-kind": "form" },
      el("div.title", null, q.plugin + " asks: " + (q.form.title || q.surfaceId)),
      q.form.message ? el("div", null, q.form.message) : null,
      ...inputs.rows,
      el("div.head", null,
        el("button.primary", { type: "button", "data-answer": "submit", onclick: () => answerQuestion(id, { values: inputs.read() }) }, "Submit"),
        el("button", { type: "button", "data-answer": "cancel", onclick: () => answerQuestion(id, { cancel: true }) }, "Cancel")));
  }
  box.append(node);
}

async function invokeAction(plugin, action) {
  try {
    const r = await apiJSON("POST", "/sessions/" + encodeURIComponent(chat.id) + "/actions", { plugin, action });
    if (r.message) chatLine(".note", "/" + plugin + ":" + action + ": " + r.message);
  } catch (e) {
    chatError(e.message);
  }
}

function actionButtons(plugin, actions) {
  if (!actions || !actions.length) return null;
  return el("div.head", null, actions.map((a) =>
    el("button.small", { type: "button", "data-action-id": a.actionId, onclick: () => invokeAction(plugin, a.actionId) }, a.label)));
}

function viewText(node, out) {
  const text = [node.label, node.value].filter(Boolean).join(": ");
  if (text) out.push(el("div", null, text));
  for (const child of node.children || []) viewText(child, out);
  return out;
}

// One element per surface (plugin + surface id), replaced by each update.
function renderSurface(u) {
  const box = document.getElementById("chat-surfaces");
  const key = u.plugin + "/" + u.surfaceId;
  const p = u.payload;
  const progress = (v) => (typeof v === "number" ? el("progress", { max: 1, value: v }) : null);
  let body;
  switch (u.kind) {
    case "status":
      body = [el("span.text", null, "● " + p.label + (p.detail ? " — " + p.detail : "")), progress(p.progress)];
      break;
    case "card":
    case "panel":
      body = [p.title ? el("div.title", null, p.title) : null,
        p.text || p.markdown ? el("div", null, p.text || p.markdown) : null,
        dl((p.fields || []).map((f) => [f.key, f.value || ""])), progress(p.progress),
        actionButtons(u.plugin, p.actions)];
      break;
    case "notification":
      body = [el("div.title", null, p.title), p.body ? el("div", null, p.body) : null];
      break;
    case "form": {
      const inputs = fieldInputs(p.fields);
      const submit = async () => {
        try {
          await apiJSON("POST", "/sessions/" + encodeURIComponent(chat.id) + "/forms",
            { plugin: u.plugin, surfaceId: u.surfaceId, values: inputs.read() });
          chatLine(".note", "form " + u.surfaceId + " submitted");
        } catch (e) {
          chatError(e.message);
        }
      };
      body = [p.title ? el("div.title", null, p.title) : null, p.message ? el("div", null, p.message) : null,
        ...inputs.rows, el("div.head", null, el("button.small.primary", { type: "button", "data-role": "submit-form", onclick: submit }, "Submit"))];
      break;
    }
    case "view":
      body = viewText(p.body, []);
      break;
    default:
      body = [el("pre", null, JSON.stringify(p))];
  }
  const severity = p.severity ? "." + p.severity.replace(/[^\w-]/g, "") : "";
  const node = el("div.surface" + severity, { "data-key": key, "data-plugin": u.plugin, "data-kind": u.kind },
    el("span.from", null, "[" + u.plugin + "]"), ...body);
  const old = Array.from(box.children).find((c) => c.dataset.key === key);
  if (old) old.replaceWith(node);
  else box.append(node);
}

async function sendLine(ev) {
  ev.preventDefault();
  const field = document.getElementById("chat-input");
  const line = field.value;
  if (!line.trim()) return;
  try {
    if (!chat.id) await openSession();
  } catch (e) {
    chatError(e.message);
    return;
  }
  field.value = "";
  // The answer comes when the turn ends; its events stream meanwhile.
  apiJSON("POST", "/sessions/" + encodeURIComponent(chat.id) + "/input", { line })
    .catch((e) => chatError(e.code === "session.busy" ? "A turn is running: wait for it to end, or cancel it." : e.message));
}

async function cancelTurn() {
  if (!chat.id) return;
  try {
    await apiJSON("POST", "/sessions/" + encodeURIComponent(chat.id) + "/cancel", {});
  } catch (e) {
    chatError(e.message);
  }
}

async function closeSession() {
  if (!chat.id) return;
  const id = chat.id;
  try {
    await apiJSON("DELETE", "/sessions/" + encodeURIComponent(id));
  } catch (e) {
    chatError(e.message);
  }
  if (chat.id === id) sessionGone();
}

async function newSession() {
  if (chat.id) await closeSession();
  try {
    await openSession();
  } catch (e) {
    chatError(e.message);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  if (!token) {
    document.getElementById("no-token").hidden = false;
    return;
  }
  document.getElementById("install-form").addEventListener("submit", planInstall);
  document.getElementById("refresh-btn").addEventListener("click", refreshAll);
  document.getElementById("reload-btn").addEventListener("click", () => act(reloadRuntime));
  document.getElementById("chat-form").addEventListener("submit", sendLine);
  document.getElementById("chat-cancel").addEventListener("click", cancelTurn);
  document.getElementById("chat-close").addEventListener("click", closeSession);
  document.getElementById("chat-new").addEventListener("click", newSession);
  refreshAll();
});
