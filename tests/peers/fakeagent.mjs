// A small ACP agent on the official SDK (@agentclientprotocol/sdk 2.4.0,
// agent().connect(ndJsonStream(...))) for the edges of agent-host
// --backend acp. Its prompts:
//
//   RUN    asks (session/request_permission, kind execute) to run
//          sh -c 'sleep 300 & touch w', and when allowed runs it through
//          terminal/create; starts a grandchild `sleep 600`; streams text;
//          reports a usage_update whose cost is $0.40
//   SNEAK  writes sneaked.txt itself, without asking, and reports a
//          tool_call of kind edit, completed
//   HOLD   starts a grandchild `sleep 600`, runs `sleep 300` in a terminal
//          when allowed, streams text, and waits for session/cancel
//   SHOW   sends a plan, its slash commands, and an edit's diff (asked for)
//   (else) says the prompt's text, and the type of each image it holds
//
//   env ACP_SDK  the directory npm installed the SDK into
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";
import path from "node:path";

const acp = await import(pathToFileURL(path.join(process.env.ACP_SDK, "node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js")).href);

const sessions = new Map(); // id -> {cwd, cancel}
let n = 0;

const update = (client, sessionId, u) => client.notify("session/update", { sessionId, update: u });
const say = (client, sessionId, text) => update(client, sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

async function ask(client, sessionId, toolCall) {
  await update(client, sessionId, { sessionUpdate: "tool_call", ...toolCall, status: "pending" });
  const r = await client.request("session/request_permission", {
    sessionId,
    toolCall,
    options: [
      { optionId: "yes", name: "Allow", kind: "allow_once" },
      { optionId: "no", name: "Reject", kind: "reject_once" },
    ],
  });
  return r.outcome.outcome === "selected" && r.outcome.optionId === "yes";
}

async function run(client, sessionId, id, command) {
  const toolCall = { toolCallId: id, title: command, kind: "execute", rawInput: { command } };
  if (!(await ask(client, sessionId, toolCall))) {
    await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: id, status: "failed" });
    return null;
  }
  await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" });
  const t = await client.request("terminal/create", { sessionId, command: "sh", args: ["-c", command] });
  return t.terminalId;
}

async function finish(client, sessionId, id, terminalId) {
  const exit = await client.request("terminal/wait_for_exit", { sessionId, terminalId });
  await client.request("terminal/release", { sessionId, terminalId });
  await update(client, sessionId, {
    sessionUpdate: "tool_call_update", toolCallId: id, status: "completed",
    content: [{ type: "content", content: { type: "text", text: `exit ${exit.exitCode}` } }],
  });
}

const app = acp
  .agent({ name: "agentry-fake-agent" })
  .onRequest("initialize", () => ({ protocolVersion: 1, agentCapabilities: { loadSession: false, promptCapabilities: { image: true } } }))
  .onRequest("session/new", ({ params }) => {
    const sessionId = `fake-${++n}`;
    sessions.set(sessionId, { cwd: params.cwd });
    return { sessionId, modes: { currentModeId: "yolo", availableModes: [{ id: "yolo", name: "Never ask" }, { id: "default", name: "Ask" }] } };
  })
  .onRequest("session/set_mode", ({ params }) => {
    sessions.get(params.sessionId).mode = params.modeId;
    return {};
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.cancel?.();
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const { sessionId } = params;
    const s = sessions.get(sessionId);
    const text = params.prompt.map((b) => b.text ?? "").join("");
    const cancelled = new Promise((resolve) => (s.cancel = resolve));
    await say(client, sessionId, `mode ${s.mode}; `);
    if (text.startsWith("RUN")) {
      spawn("sleep", ["600"], { stdio: "ignore" });
      const term = await run(client, sessionId, "run-1", "sleep 300 & touch w");
      if (term) await finish(client, sessionId, "run-1", term);
      for (const w of ["ran ", "it ", "all"]) await say(client, sessionId, w);
      await update(client, sessionId, { sessionUpdate: "usage_update", used: 1000, size: 200000, cost: { amount: 0.4, currency: "USD" } });
      return { stopReason: "end_turn" };
    }
    if (text.startsWith("SNEAK")) {
      const file = path.join(s.cwd, "sneaked.txt");
      writeFileSync(file, "sneaked\n");
      await update(client, sessionId, { sessionUpdate: "tool_call", toolCallId: "sneak-1", title: "Write sneaked.txt", kind: "edit", status: "completed", locations: [{ path: file }] });
      await say(client, sessionId, "wrote it unasked");
      return { stopReason: "end_turn" };
    }
    if (text.startsWith("SHOW")) {
      await update(client, sessionId, { sessionUpdate: "plan", entries: [
        { content: "read", priority: "high", status: "completed" },
        { content: "write", priority: "medium", status: "in_progress" }] });
      await update(client, sessionId, { sessionUpdate: "available_commands_update", availableCommands: [
        { name: "review", description: "Review the change", input: { hint: "what to review" } }] });
      const file = path.join(s.cwd, "a.txt");
      const edit = { toolCallId: "edit-1", title: "Edit a.txt", kind: "edit", locations: [{ path: file }],
        content: [{ type: "diff", path: file, oldText: "one\n", newText: "ONE\n" }] };
      if (await ask(client, sessionId, edit)) {
        await client.request("fs/write_text_file", { sessionId, path: file, content: "ONE\n" });
        await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: "edit-1", status: "completed" });
      }
      return { stopReason: "end_turn" };
    }
    if (text.startsWith("HOLD")) {
      spawn("sleep", ["600"], { stdio: "ignore" });
      await run(client, sessionId, "hold-1", "sleep 300 & touch w; sleep 300");
      await say(client, sessionId, "holding");
      await cancelled;
      return { stopReason: "cancelled" };
    }
    const images = params.prompt.filter((b) => b.type === "image").map((b) => ` image ${b.mimeType} ${b.data.length}`);
    await say(client, sessionId, text + images.join(""));
    return { stopReason: "end_turn" };
  });

app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
