/**
 * The programs that keep an interpreter alive inside the sandbox. Each reads one JSON request per
 * line on stdin ({"code": "..."}), runs it in a namespace that persists between requests, and
 * answers on stdout with a line starting with the marker (a per-interpreter random string, given
 * as the first argument) followed by JSON: {"stdout", "stderr", "value", "error"}. The code's own
 * prints are captured, so only a write to the raw file descriptor can come before the marker; the
 * caller keeps such text as output too.
 */

/** Longest repr of a last expression sent back; the tool result is cut again centrally. */
const VALUE_CHARS = 20_000;

export const PYTHON_DRIVER = `
import ast, contextlib, io, json, sys, traceback
marker = sys.argv[1]
out = sys.stdout
names = {"__name__": "__main__", "__builtins__": __builtins__}
for line in sys.stdin:
    code = json.loads(line)["code"]
    o, e = io.StringIO(), io.StringIO()
    value = error = None
    try:
        tree = ast.parse(code, "<cell>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            exec(compile(tree, "<cell>", "exec"), names)
            if last is not None:
                result = eval(compile(ast.Expression(last.value), "<cell>", "eval"), names)
                if result is not None:
                    names["_"] = result
                    value = repr(result)[:${VALUE_CHARS}]
    except BaseException as err:
        tb = err.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
            tb = tb.tb_next
        error = "".join(traceback.format_exception(type(err), err, tb))
    out.write("\\n" + marker + json.dumps({"stdout": o.getvalue(), "stderr": e.getvalue(), "value": value, "error": error}) + "\\n")
    out.flush()
`;

export const NODE_DRIVER = `
const vm = require('node:vm');
const util = require('node:util');
const { Console } = require('node:console');
const { Writable } = require('node:stream');
const { createRequire } = require('node:module');
const readline = require('node:readline');
const marker = process.argv[1];
let o = '';
let e = '';
const sink = (add) => new Writable({ write(chunk, _enc, done) { add(String(chunk)); done(); } });
const context = vm.createContext({
  console: new Console({ stdout: sink((t) => { o += t; }), stderr: sink((t) => { e += t; }) }),
  require: createRequire(process.cwd() + '/'),
  process, Buffer, URL, URLSearchParams, TextEncoder, TextDecoder, setTimeout, clearTimeout,
  setInterval, clearInterval, setImmediate, queueMicrotask, structuredClone, fetch, AbortController,
});
const reply = (value, error) => {
  process.stdout.write('\\n' + marker + JSON.stringify({ stdout: o, stderr: e, value, error }) + '\\n');
  o = '';
  e = '';
};
const show = (v) => (v === undefined ? null : util.inspect(v, { depth: 4, breakLength: 100 }).slice(0, ${VALUE_CHARS}));
const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    const { code } = JSON.parse(line);
    try {
      let script;
      try {
        script = new vm.Script(code, { filename: 'cell' });
      } catch (err) {
        if (!/await is only valid/.test(String(err))) throw err;
        // Top-level await: run as an async function (its let/const stay local to this call); an
        // expression alone keeps its value.
        try {
          script = new vm.Script('(async () => (\\n' + code + '\\n))()', { filename: 'cell' });
        } catch {
          script = new vm.Script('(async () => {\\n' + code + '\\n})()', { filename: 'cell' });
        }
      }
      let value = script.runInContext(context);
      if (value && typeof value.then === 'function') value = await value;
      if (value !== undefined) context._ = value;
      reply(show(value), null);
    } catch (err) {
      reply(null, err && err.stack ? String(err.stack) : String(err));
    }
  });
});
lines.on('close', () => queue.then(() => process.exit(0)));
`;
