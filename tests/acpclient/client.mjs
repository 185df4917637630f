// A scripted ACP client on the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0: client().connect(ndJsonStream(...))),
// for tests: it starts the agent command given as its arguments, and is
// driven by JSON lines on its standard input, reporting on its standard
// output. Nobody here wrote the SDK's codec: what it accepts is what an
// editor on it accepts.
//
//   env ACP_SDK        the directory npm installed the SDK into
//   in  {"op":"request","tag":T,"method":M,"params":P}  -> {"tag":T,"result":R} | {"tag":T,"error":E}
//       {"op":"notify","method":M,"params":P}
//       {"op":"permission","answer":"allow"|"allow_session"|"reject"|"cancelled"|"hold"|"choose:NAME"}
//                          (choose: the option named NAME)
//       {"op":"elicit","answer":"decline"|"cancel"|LABEL}
//                          how elicitation/create is answered: accepted with LABEL for
//                          every field (an array of it where several may be chosen)
//       {"op":"release"}   answer the permission requests held, as "cancelled"
//       {"op":"end"}       close the agent's standard input, report its exit
//       {"op":"eof"}       close the agent's standard input, and go on
//   out {"event":"pid","pid":N}, {"event":"update","update":U,"t":MS},
//       {"event":"permission","params":P,"t":MS}, {"event":"withdrawn","params":P,"t":MS}
//       {"event":"elicitation","params":P,"t":MS}
//       (the agent cancelled that permission request), {"event":"exit","code":C,"signal":S}
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";

const sdkDir = process.env.ACP_SDK;
const acp = await import(pathToFileURL(path.join(sdkDir, "node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js")).href);

const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const t0 = Date.now();
const say = (v) => process.stdout.write(JSON.stringify(v) + "\n");
say({ event: "pid", pid: child.pid });

let answer = "allow";
let elicit = "decline";
const held = [];
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));

const conn = acp
  .client({ name: "agentry-tests" })
  .onNotification("session/update", ({ params }) => {
    say({ event: "update", update: params.update, sessionId: params.sessionId, t: Date.now() - t0 });
  })
  .onRequest("session/request_permission", ({ params, signal }) => {
    say({ event: "permission", params, t: Date.now() - t0 });
    // The agent withdrew it ($/cancel_request): the SDK aborts the handler.
    signal?.addEventListener("abort", () => say({ event: "withdrawn", params, t: Date.now() - t0 }));
    const pick = (kind) => params.options.find((o) => o.kind === kind)?.optionId;
    if (answer.startsWith("choose:")) {
      const name = answer.slice("choose:".length);
      return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.name === name)?.optionId } };
    }
    switch (answer) {
      case "hold":
        return new Promise((resolve) => held.push(resolve));
      case "cancelled":
        return { outcome: { outcome: "cancelled" } };
      case "reject":
        return { outcome: { outcome: "selected", optionId: pick("reject_once") } };
      case "allow_session":
        return { outcome: { outcome: "selected", optionId: pick("allow_always") } };
      default:
        return { outcome: { outcome: "selected", optionId: pick("allow_once") } };
    }
  })
  .onRequest("elicitation/create", ({ params, signal }) => {
    say({ event: "elicitation", params, t: Date.now() - t0 });
    signal?.addEventListener("abort", () => say({ event: "withdrawn", params, t: Date.now() - t0 }));
    if (elicit === "decline" || elicit === "cancel") return { action: elicit };
    const content = {};
    for (const [name, prop] of Object.entries(params.requestedSchema?.properties ?? {})) {
      content[name] = prop.type === "array" ? [elicit] : elicit;
    }
    return { action: "accept", content };
  })
  .connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  switch (c.op) {
    case "request":
      conn.agent.request(c.method, c.params).then(
        (result) => say({ tag: c.tag, result: result ?? {}, t: Date.now() - t0 }),
        (e) => say({ tag: c.tag, error: { code: e?.code ?? null, message: String(e?.message ?? e), data: e?.data ?? null }, t: Date.now() - t0 }),
      );
      break;
    case "notify":
      await conn.agent.notify(c.method, c.params);
      break;
    case "permission":
      answer = c.answer;
      break;
    case "elicit":
      elicit = c.answer;
      break;
    case "release":
      while (held.length) held.shift()({ outcome: { outcome: "cancelled" } });
      break;
    case "eof":
      child.stdin.end();
      say({ event: "eof", t: Date.now() - t0 });
      break;
    case "end":
      child.stdin.end();
      say({ event: "exit", ...(await exited), t: Date.now() - t0 });
      process.exit(0);
  }
}
child.stdin.end();
say({ event: "exit", ...(await exited), t: Date.now() - t0 });
process.exit(0);
