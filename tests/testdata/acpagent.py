#!/usr/bin/env python3
"""A tiny ACP agent for runagent's tests (newline-delimited JSON-RPC on
stdio). Each line of a prompt is a command:

  SAY TEXT         stream TEXT as the answer
  COST USD         report usage_update with this cost (the session's total)
  WRITE PATH       ask to edit PATH; if allowed, write it through fs/write_text_file
  RUN CMD          ask to execute CMD; if allowed, run it in a terminal of the client's
  RUNENV K=V CMD   the same, the terminal given the variable K=V
  RUNOTHER A ;; B  ask to execute A; if allowed, run B instead
  SNEAK PATH       write PATH itself and report the edit, never asking
  HANG DIR         start a grandchild `sleep 6917`, write DIR/agent.pid and
                   DIR/sleep.pid, stream, and wait for session/cancel
  DIE FLAG         the first time (FLAG absent): create FLAG and die mid-turn
  TOOLS N          report N tool calls of kind read, each completed
  SPAWN N          leave a grandchild `sleep N` running (in its group)
  DETACH DIR       leave a `sleep 6918` running in a session of its own, its
                   parent gone (an orphan), and write its pid to DIR/detached.pid
  ELICIT           ask the client which letter (A, B or C) by elicitation/create,
                   a form, when the client said it takes forms; answer
                   "chose X", "declined", "cancelled" or "no elicitation"
  FSWRITE PATH     write PATH through fs/write_text_file without asking
  FSWRITEIP PATH   the same, the edit shown in progress before the write and
                   ended after it
  SEARCH PATH      report a completed search of PATH, never asking
  PLAN             send a plan (priorities, _meta)
  COMMANDS         send available_commands_update (an input hint, _meta)
  DIFF PATH        report an edit of PATH with its diff (and _meta), ask,
                   write it through fs/write_text_file, and end the call
                   with the diff again
  MCP              answer "mcp METHOD: " and the mcpServers the session was
                   last started or taken up with (by METHOD), as JSON

FAKEACP_PROMPTCAPS lists the prompt capabilities it says it has (say
"image,embeddedContext"; none by default). With FAKEACP_PROMPTS set (a
file), every prompt's content blocks are appended to it, one JSON line a
prompt. With FAKEACP_SENT set (a file), every session/update's update sent is
appended to it, one JSON line each.

With FAKEACP_META set, the tool call of every permission it asks has a
_meta of its own. With FAKEACP_RAWINPUT set, a command's permission
request carries it as rawInput.command, as Claude's and Codex's adapters'
do.

FAKEACP_MCPCAPS lists the MCP transports it says it takes besides stdio
(say "http,sse"; none by default).

With FAKEACP_AUTH set, session/new answers ACP's "Authentication required"
(-32000), having written a JSON dump to stderr, as Qwen Code does logged
out. With FAKEACP_NOLOAD set, it can neither load nor resume a session; with
FAKEACP_NOLIST set, it lists none. With FAKEACP_SESSIONS set (a file), the
sessions it starts are kept there, one JSON line each, for session/list
(titled "fake session ID"); session/load replays "earlier prompt" and
"earlier answer", and appends "loaded ID" to turns.log, session/resume
"resumed ID".

Every turn appends "turn N session S" to turns.log in its working directory.
A prompt with none of these commands is answered "continued".
"""
import json
import os
import subprocess
import sys

next_id = [0]
pending_cancel = [False]
state = {"turns": 0, "session": None, "forms": False, "mcp": None}


def keep_mcp(msg):
    state["mcp"] = "%s: %s" % (msg["method"], json.dumps(msg["params"].get("mcpServers"), sort_keys=True))


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def handle_incoming(msg):
    """A message that is not the response awaited: a notification, or a
    request of the client (answered at once)."""
    if msg.get("method") == "session/cancel":
        pending_cancel[0] = True
        return
    if "method" in msg and "id" in msg:
        serve(msg)


def call(method, params):
    next_id[0] += 1
    rid = "a%d" % next_id[0]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    while True:
        msg = read()
        if msg.get("id") == rid and "method" not in msg:
            return msg
        handle_incoming(msg)


def update(sid, u):
    if os.environ.get("FAKEACP_SENT"):
        with open(os.environ["FAKEACP_SENT"], "a") as f:
            f.write(json.dumps(u) + "\n")
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": u}})


def say(sid, text):
    update(sid, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def ask(sid, tcid, title, kind, path=None):
    tc = {"toolCallId": tcid, "title": title, "kind": kind, "status": "pending"}
    if kind == "execute" and os.environ.get("FAKEACP_RAWINPUT"):
        tc["rawInput"] = {"command": title}
    if path:
        tc["locations"] = [{"path": path}]
    if os.environ.get("FAKEACP_META"):
        tc["_meta"] = {"fake": {"asked": title}}
    update(sid, dict(tc, sessionUpdate="tool_call"))
    r = call("session/request_permission", {"sessionId": sid, "toolCall": tc, "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
    out = r.get("result", {}).get("outcome", {})
    return out.get("outcome") == "selected" and out.get("optionId") == "yes"


def done(sid, tcid, status, text):
    update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tcid, "status": status,
                 "content": [{"type": "content", "content": {"type": "text", "text": text}}]})


def elicit(sid, tcid):
    if not state["forms"]:
        return "no elicitation"
    r = call("elicitation/create", {"sessionId": sid, "toolCallId": tcid, "mode": "form", "message": "Pick a letter",
        "requestedSchema": {"type": "object", "required": ["letter"], "properties": {
            "letter": {"type": "string", "title": "Letter", "description": "Which letter?", "enum": ["A", "B", "C"]}}}})
    if "error" in r:
        return "error " + r["error"]["message"]
    res = r["result"]
    if res.get("action") == "accept":
        return "chose %s" % res.get("content", {}).get("letter")
    return {"decline": "declined", "cancel": "cancelled"}.get(res.get("action"), "action " + str(res.get("action")))


def prompt(msg):
    p = msg["params"]
    sid = p["sessionId"]
    # A session/cancel read while no prompt ran (one that crossed the last
    # prompt's answer on the wire) cancels nothing: ACP's cancel is of the
    # turn in progress, and real agents start each turn uncancelled.
    pending_cancel[0] = False
    text = "\n".join(b.get("text", "") for b in p["prompt"] if b.get("type") == "text")
    if os.environ.get("FAKEACP_PROMPTS"):
        with open(os.environ["FAKEACP_PROMPTS"], "a") as f:
            f.write(json.dumps(p["prompt"]) + "\n")
    state["turns"] += 1
    with open("turns.log", "a") as f:
        f.write("turn %d session %s\n" % (state["turns"], sid))
    acted = False
    n = 0
    for line in text.splitlines():
        word, _, arg = line.strip().partition(" ")
        n += 1
        tcid = "t%d" % n
        if word == "SAY":
            for part in arg.split(" "):
                say(sid, part + " ")
        elif word == "COST":
            update(sid, {"sessionUpdate": "usage_update", "used": 1000, "size": 200000,
                         "cost": {"amount": float(arg), "currency": "USD"}})
        elif word == "WRITE":
            if ask(sid, tcid, "write " + arg, "edit", os.path.abspath(arg)):
                r = call("fs/write_text_file", {"sessionId": sid, "path": os.path.abspath(arg), "content": "written\n"})
                done(sid, tcid, "failed" if "error" in r else "completed", "wrote it" if "error" not in r else r["error"]["message"])
            else:
                done(sid, tcid, "failed", "rejected")
        elif word in ("RUN", "RUNENV", "RUNOTHER"):
            env, asked, run = [], arg, arg
            if word == "RUNENV":
                kv, asked = arg.split(" ", 1)
                k, v = kv.split("=", 1)
                env, run = [{"name": k, "value": v}], asked
            elif word == "RUNOTHER":
                asked, run = [x.strip() for x in arg.split(";;", 1)]
            if ask(sid, tcid, asked, "execute"):
                r = call("terminal/create", {"sessionId": sid, "command": "sh", "args": ["-c", run], "env": env})
                if "error" in r:
                    done(sid, tcid, "failed", r["error"]["message"])
                else:
                    tid = r["result"]["terminalId"]
                    w = call("terminal/wait_for_exit", {"sessionId": sid, "terminalId": tid})
                    call("terminal/release", {"sessionId": sid, "terminalId": tid})
                    done(sid, tcid, "completed", "exit %s" % w.get("result", {}).get("exitCode"))
            else:
                done(sid, tcid, "failed", "rejected")
        elif word == "SNEAK":
            with open(arg, "w") as f:
                f.write("sneaked\n")
            update(sid, {"sessionUpdate": "tool_call", "toolCallId": tcid, "title": "sneak " + arg, "kind": "edit",
                         "status": "completed", "locations": [{"path": os.path.abspath(arg)}]})
        elif word == "TOOLS":
            for i in range(int(arg)):
                cid = "%s-%d" % (tcid, i)
                update(sid, {"sessionUpdate": "tool_call", "toolCallId": cid, "title": "look %d" % i, "kind": "read", "status": "in_progress"})
                done(sid, cid, "completed", "looked")
        elif word == "ELICIT":
            say(sid, elicit(sid, tcid))
        elif word == "FSWRITE":
            r = call("fs/write_text_file", {"sessionId": sid, "path": os.path.abspath(arg), "content": "written\n"})
            say(sid, "refused: " + r["error"]["message"] if "error" in r else "wrote it")
        elif word == "FSWRITEIP":
            # As Gemini CLI and Qwen Code do: the call shown in progress,
            # then the write asked of the client, then the call's end.
            update(sid, {"sessionUpdate": "tool_call", "toolCallId": tcid, "title": "write " + arg, "kind": "edit",
                         "status": "in_progress", "locations": [{"path": os.path.abspath(arg)}]})
            r = call("fs/write_text_file", {"sessionId": sid, "path": os.path.abspath(arg), "content": "written\n"})
            done(sid, tcid, "failed" if "error" in r else "completed", r["error"]["message"] if "error" in r else "wrote it")
            say(sid, "refused: " + r["error"]["message"] if "error" in r else "wrote it")
        elif word == "SEARCH":
            update(sid, {"sessionUpdate": "tool_call", "toolCallId": tcid, "title": "search " + arg, "kind": "search",
                         "status": "completed", "rawInput": {"path": arg, "pattern": "x"}})
            say(sid, "searched")
        elif word == "PLAN":
            update(sid, {"sessionUpdate": "plan", "entries": [
                {"content": "read the code", "priority": "high", "status": "completed"},
                {"content": "fix it", "priority": "low", "status": "in_progress", "_meta": {"fake": 1}}]})
        elif word == "COMMANDS":
            update(sid, {"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": "review", "description": "Review a file", "input": {"hint": "the file"}, "_meta": {"fake": 2}},
                {"name": "init", "description": "Write AGENTS.md"}]})
        elif word == "DIFF":
            path = os.path.abspath(arg)
            diff = {"type": "diff", "path": path, "oldText": None, "newText": "new\n", "_meta": {"fake": 3}}
            tc = {"toolCallId": tcid, "title": "Write " + arg, "kind": "edit", "status": "pending",
                  "locations": [{"path": path, "line": 1}], "content": [diff],
                  "rawInput": {"file_path": path, "content": "new\n"}, "_meta": {"fake": 4}}
            update(sid, dict(tc, sessionUpdate="tool_call"))
            r = call("session/request_permission", {"sessionId": sid, "toolCall": tc, "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]})
            out = r.get("result", {}).get("outcome", {})
            if out.get("optionId") == "yes":
                call("fs/write_text_file", {"sessionId": sid, "path": path, "content": "new\n"})
                update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": tcid, "status": "completed",
                             "content": [diff], "rawOutput": {"ok": True}, "_meta": {"fake": 5}})
            else:
                done(sid, tcid, "failed", "rejected")
        elif word == "MCP":
            say(sid, "mcp " + str(state["mcp"]))
        elif word == "SPAWN":
            subprocess.Popen(["sleep", arg])
        elif word == "DETACH":
            # A child makes a session of its own, forks the sleep into it,
            # writes its pid and exits: the sleep's parent is gone.
            child = os.fork()
            if child == 0:
                os.setsid()
                sleeper = os.fork()
                if sleeper == 0:
                    os.execvp("sleep", ["sleep", "6918"])
                with open(os.path.join(arg, "detached.pid"), "w") as f:
                    f.write("%d\n" % sleeper)
                os._exit(0)
            os.waitpid(child, 0)
            say(sid, "detached ")
        elif word == "HANG":
            sleeper = subprocess.Popen(["sleep", "6917"])
            with open(os.path.join(arg, "sleep.pid"), "w") as f:
                f.write("%d\n" % sleeper.pid)
            with open(os.path.join(arg, "agent.pid"), "w") as f:
                f.write("%d\n" % os.getpid())
            say(sid, "working ")
            while not pending_cancel[0]:
                handle_incoming(read())
        elif word == "DIE":
            if not os.path.exists(arg):
                open(arg, "w").close()
                say(sid, "dying ")
                os._exit(1)
        else:
            continue
        acted = True
    if not acted:
        say(sid, "continued")
    if pending_cancel[0]:
        pending_cancel[0] = False
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "cancelled"}})
        return
    send({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "end_turn"}})


def serve(msg):
    m = msg["method"]
    if m == "initialize":
        caps = msg["params"].get("clientCapabilities") or {}
        state["forms"] = (caps.get("elicitation") or {}).get("form") is not None
        pcaps = {"image": False}
        for c in filter(None, os.environ.get("FAKEACP_PROMPTCAPS", "").split(",")):
            pcaps[c] = True
        scaps = {}
        if not os.environ.get("FAKEACP_NOLOAD"):
            scaps["resume"] = {}
        if not os.environ.get("FAKEACP_NOLIST"):
            scaps["list"] = {}
        mcaps = {"http": False, "sse": False}
        for c in filter(None, os.environ.get("FAKEACP_MCPCAPS", "").split(",")):
            mcaps[c] = True
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1, "agentCapabilities": {
            "loadSession": not os.environ.get("FAKEACP_NOLOAD"), "promptCapabilities": pcaps,
            "mcpCapabilities": mcaps, "sessionCapabilities": scaps}}})
    elif m == "session/new" and os.environ.get("FAKEACP_AUTH"):
        sys.stderr.write('{"error":\n  "auth"\n}\n')
        sys.stderr.flush()
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32000, "message": "Authentication required"}})
    elif m == "session/new":
        keep_mcp(msg)
        state["session"] = "sess-%d" % os.getpid()
        if os.environ.get("FAKEACP_SESSIONS"):
            with open(os.environ["FAKEACP_SESSIONS"], "a") as f:
                f.write(json.dumps({"sessionId": state["session"], "cwd": msg["params"]["cwd"],
                                    "title": "fake session " + state["session"], "updatedAt": "2026-01-02T03:04:05Z",
                                    "_meta": {"fake": True}}) + "\n")
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessionId": state["session"], "modes": {
            "currentModeId": "yolo", "availableModes": [{"id": "default", "name": "Ask"}, {"id": "yolo", "name": "Never ask"}]}}})
    elif m == "session/load":
        keep_mcp(msg)
        state["session"] = msg["params"]["sessionId"]
        with open("turns.log", "a") as f:
            f.write("loaded %s\n" % state["session"])
        update(state["session"], {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "earlier prompt"}})
        say(state["session"], "earlier answer")
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    elif m == "session/resume":
        keep_mcp(msg)
        state["session"] = msg["params"]["sessionId"]
        with open("turns.log", "a") as f:
            f.write("resumed %s\n" % state["session"])
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    elif m == "session/list":
        sessions = []
        if os.environ.get("FAKEACP_SESSIONS") and os.path.exists(os.environ["FAKEACP_SESSIONS"]):
            with open(os.environ["FAKEACP_SESSIONS"]) as f:
                sessions = [json.loads(l) for l in f if l.strip()]
        cwd = msg["params"].get("cwd")
        sessions = [x for x in sessions if cwd is None or x["cwd"] == cwd]
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"sessions": sessions}})
    elif m == "session/set_mode":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    elif m == "session/prompt":
        prompt(msg)
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no " + m}})


def main():
    while True:
        msg = read()
        if "method" in msg and "id" in msg:
            serve(msg)
        elif msg.get("method") == "session/cancel":
            pending_cancel[0] = True


main()
