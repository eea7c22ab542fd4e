const lib = require("./lib.cjs");
exports.register = function register(on) { on("session.start", (e, $) => $.tool.register({ name: "t" }, () => 1)); };
