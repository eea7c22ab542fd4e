// The plugins page of `reasonix serve`. It uses the same routes and token as
// any client. Text from packages is only ever set as textContent (never
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

class ApiError extends Error {}

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + token };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) {
    let parsed = null;
    try { parsed = await res.json(); } catch (_) { /* not JSON */ }
    throw new ApiError(describeError(parsed, res.status));
  }
  return res;
}

async function apiJSON(method, path, body) {
  return (await api(method, path, body)).json();
}

function reloadNote(answer) {
  if (answer && answer.reloadError) message("Saved, but the runtime was not reloaded: " + answer.reloadError, "error");
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
  const r = await apiJSON("POST", "/extensions/reload");
  message("Runtime reloaded: generation " + r.fromGeneration + " → " + r.toGeneration, "ok");
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

document.addEventListener("DOMContentLoaded", () => {
  if (!token) {
    document.getElementById("no-token").hidden = false;
    return;
  }
  document.getElementById("install-form").addEventListener("submit", planInstall);
  document.getElementById("refresh-btn").addEventListener("click", refreshAll);
  document.getElementById("reload-btn").addEventListener("click", () => act(reloadRuntime));
  refreshAll();
});
