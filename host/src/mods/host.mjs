// The Reasonix host script for one Claude Code mod. Shipped inside the
// reasonix binary and run as `node --input-type=module -e <this>`: it
// imports the mod's module, calls register(on, options), and talks to
// Reasonix over NDJSON JSON-RPC 2.0 on stdin/stdout.
//
// Host -> here: mod/load, mod/hook, mod/tool. Here -> host: "$/<member>"
// for every `$` call the host answers (the session, prompts, tools,
// commands, UI, and anything unserved, which the host rejects with
// mod.unsupported). Everything else `$` offers runs here, as the user.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { register as registerHooks } from "node:module";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

// stdout carries the protocol only: whatever the mod prints goes to stderr.
const emit = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, encoding, cb) => process.stderr.write(chunk, encoding, cb);

function send(message) {
  emit(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}

let nextId = 1;
const pending = new Map();

class ModError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
    this.name = "ModError";
  }
}

// A call the host answers.
function host(name, args) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    send({ id, method: "$/" + name, params: { args: jsonSafe(args) } });
  });
}

function jsonSafe(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value, (_, v) => (v === undefined ? null : v)) ?? "null");
}

// ----- state (also the "claude-code" module) -----

const atoms = new Map();
let nextAtom = 1;
const state = {
  atom(initial) {
    const atom = Object.freeze({ [Symbol.for("reasonix.atom")]: nextAtom++ });
    atoms.set(atom, { value: initial });
    return atom;
  },
  derive(compute) {
    if (typeof compute !== "function") throw new TypeError("derive(compute) takes a function");
    const atom = Object.freeze({ [Symbol.for("reasonix.atom")]: nextAtom++ });
    atoms.set(atom, { compute });
    return atom;
  },
  read(atom) {
    const cell = atoms.get(atom);
    if (!cell) throw new TypeError("read(atom): not an atom of this mod");
    return cell.compute ? cell.compute(state.read) : cell.value;
  },
  update(atom, next) {
    const cell = atoms.get(atom);
    if (!cell || cell.compute) throw new TypeError("update(atom, next): not a writable atom of this mod");
    cell.value = typeof next === "function" ? next(cell.value) : next;
    return cell.value;
  },
  memberOf(atom, item) {
    const value = state.read(atom);
    if (value instanceof Set || value instanceof Map) return value.has(item);
    if (Array.isArray(value)) return value.includes(item);
    if (value && typeof value === "object") return Object.hasOwn(value, item);
    return false;
  },
};
globalThis[Symbol.for("reasonix.mods.state")] = state;

const STATE_MODULE = "data:text/javascript," + encodeURIComponent(
  'const s = globalThis[Symbol.for("reasonix.mods.state")];\n' +
  "export const atom = s.atom, read = s.read, update = s.update, derive = s.derive, memberOf = s.memberOf;\n",
);
registerHooks("data:text/javascript," + encodeURIComponent(
  "export async function resolve(specifier, context, next) {\n" +
  '  if (specifier === "claude-code") return { url: ' + JSON.stringify(STATE_MODULE) + ", shortCircuit: true };\n" +
  "  return next(specifier, context);\n" +
  "}\n",
));

// ----- $ -----

let session = { id: "", cwd: process.cwd(), root: process.cwd() };
let storePath = "";
let store = null;
let loaded = false;
const handlers = new Map();
const tools = new Map();

function loadStore() {
  if (store) return store;
  try {
    store = JSON.parse(fs.readFileSync(storePath, "utf8"));
    if (!store || typeof store !== "object" || Array.isArray(store)) store = {};
  } catch {
    store = {};
  }
  return store;
}

function saveStore() {
  fs.mkdirSync(path.dirname(storePath), { recursive: true });
  const tmp = storePath + ".tmp-" + process.pid;
  fs.writeFileSync(tmp, JSON.stringify(store));
  fs.renameSync(tmp, storePath);
}

const at = (p) => path.resolve(session.cwd, String(p));

function run(command, args = [], options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(String(command), args.map(String), {
      cwd: options.cwd ? at(options.cwd) : session.cwd,
      env: options.env ? { ...process.env, ...options.env } : process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

const served = {
  plugin: {},
  store: {
    get: (key) => loadStore()[key],
    set: (key, value) => {
      loadStore()[key] = value;
      saveStore();
    },
    delete: (key) => {
      delete loadStore()[key];
      saveStore();
    },
    keys: () => Object.keys(loadStore()),
  },
  clock: { now: () => Date.now() },
  env: { get: (name) => process.env[name] },
  fs: {
    read: (p) => fs.promises.readFile(at(p), "utf8"),
    write: async (p, text) => {
      await fs.promises.mkdir(path.dirname(at(p)), { recursive: true });
      await fs.promises.writeFile(at(p), String(text));
    },
    exists: (p) => fs.existsSync(at(p)),
    list: (p = ".") => fs.promises.readdir(at(p)),
  },
  process: { run },
  http: { fetch: (...args) => globalThis.fetch(...args) },
  state,
  session: {
    get id() {
      return session.id;
    },
    get cwd() {
      return session.cwd;
    },
    get root() {
      return session.root;
    },
    messages: (options = {}) => host("session.messages", [options]),
    usage: () => host("session.usage", []),
  },
  prompt: {
    submit: (text, options) => host("prompt.submit", options === undefined ? [text] : [text, options]),
  },
  tool: {
    register: async (spec, handler) => {
      if (typeof handler !== "function") throw new TypeError("tool.register(spec, handler) takes a handler function");
      const name = spec && spec.name;
      tools.set(name, handler);
      try {
        return await host("tool.register", [spec]);
      } catch (error) {
        tools.delete(name);
        throw error;
      }
    },
    call: (name, args) => host("tool.call", [name, args ?? {}]),
    list: () => host("tool.list", []),
  },
  command: {
    register: (spec) => host("command.register", [spec]),
    run: (name, args) => host("command.run", [name, args ?? ""]),
    list: () => host("command.list", []),
  },
  ui: Object.fromEntries(
    ["toast", "status", "notice", "log", "ask", "resolve", "invalidate"].map((name) => [
      name,
      (...args) => host("ui." + name, args),
    ]),
  ),
};

// Anything else: the host names it unserved and rejects with mod.unsupported.
function unserved(name) {
  return new Proxy(function () {}, {
    get: (_, key) => (typeof key === "symbol" || key === "then" ? undefined : unserved(name + "." + key)),
    apply: (_, __, args) => host(name, args),
  });
}

function members(tree, prefix) {
  return new Proxy(tree, {
    get(target, key) {
      if (typeof key === "symbol" || key === "then" || key === "toJSON") return target[key];
      if (Object.hasOwn(target, key)) {
        const value = target[key];
        const plain = value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
        return plain && key !== "plugin" ? members(value, prefix + key + ".") : value;
      }
      return unserved(prefix + key);
    },
  });
}

const $ = members(served, "");

// ----- the protocol -----

function on(event, handler) {
  if (loaded) throw new ModError("mod.unsupported", "on() registers handlers while register() runs");
  if (typeof event !== "string") throw new TypeError("on(event, handler): the event is a string");
  if (typeof handler !== "function") throw new TypeError("on(event, handler): the handler is a function");
  if (!handlers.has(event)) handlers.set(event, []);
  handlers.get(event).push(handler);
}

function describe(error) {
  if (error instanceof Error) return (error.stack || error.message || String(error)).slice(0, 4000);
  return String(error).slice(0, 4000);
}

async function load(params) {
  session = params.session;
  storePath = params.store;
  served.plugin = Object.freeze({ ...params.plugin });
  process.chdir(session.cwd);
  const module = await import(pathToFileURL(params.module).href);
  const register = module.register ?? module.default?.register ?? (typeof module.default === "function" ? module.default : undefined);
  if (typeof register !== "function") {
    throw new Error("the module does not export register(on, options)");
  }
  await register(on, { $, plugin: served.plugin });
  loaded = true;
  const events = {};
  for (const [event, list] of handlers) events[event] = list.length;
  return { events };
}

async function hook(params) {
  const list = handlers.get(params.event) ?? [];
  const handler = list[params.index];
  if (!handler) throw new Error(`no handler ${params.index} for ${params.event}`);
  const value = await handler(params.payload, $);
  return { value: jsonSafe(value) };
}

async function tool(params) {
  const handler = tools.get(params.name);
  if (!handler) throw new Error(`no tool ${params.name}`);
  const value = await handler(params.arguments, $);
  return { value: jsonSafe(value) };
}

const methods = { "mod/load": load, "mod/hook": hook, "mod/tool": tool };

async function serve(message) {
  const method = methods[message.method];
  try {
    if (!method) throw new Error(`unknown method ${message.method}`);
    const result = await method(message.params ?? {});
    send({ id: message.id, result });
  } catch (error) {
    send({ id: message.id, error: { code: -32000, message: describe(error) } });
  }
}

function answer(message) {
  const waiting = pending.get(message.id);
  if (!waiting) return;
  pending.delete(message.id);
  if (message.error) {
    const code = message.error.data && message.error.data.code;
    waiting.reject(new ModError(code || "mod.error", message.error.message));
  } else {
    waiting.resolve(message.result === undefined ? null : message.result);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.method !== undefined && message.id !== undefined) serve(message);
  else if (message.id !== undefined) answer(message);
});
// Reasonix closing stdin is the end of the session for this process.
lines.on("close", () => process.exit(0));
process.on("unhandledRejection", (error) => {
  process.stderr.write("unhandled rejection in the mod: " + describe(error) + "\n");
});
