// The A2A inspector page. Every call goes through this server's
// /inspector/api (bridge/inspector/api.py), which speaks A2A to the agent over
// the binding chosen here and answers with what went over the wire (wire.js
// shows it). Plain DOM code, no build step, no dependencies.
"use strict";

const $ = (id) => document.getElementById(id);
const FINAL = ["COMPLETED", "FAILED", "CANCELED", "REJECTED"];
const state = { pages: [""], page: 0, taskId: "", next: "" };

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (k in node) node[k] = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function shortState(s) {
  return (s || "TASK_STATE_UNSPECIFIED").replace("TASK_STATE_", "");
}

function showError(error) {
  const box = $("error");
  if (!error) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = `${error.reason}: ${error.message}`;
}

function headers() {
  const out = {};
  for (const line of $("headers").value.split("\n")) {
    const at = line.indexOf(":");
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

// Headers are credentials, often: kept for this tab only (sessionStorage).
function headersChanged() {
  const count = Object.keys(headers()).length;
  $("headers-count").textContent = count ? `(${count})` : "";
  sessionStorage.setItem("a2a-inspector-headers", $("headers").value);
}

function body(method, params) {
  return { target: $("target").value.trim(), binding: $("binding").value,
           headers: headers(), method, params };
}

async function api(path, payload) {
  const resp = await fetch(`api/${path}`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(payload) });
  if (!resp.ok) return { error: { reason: `HTTP ${resp.status}`, message: await resp.text() } };
  const answer = await resp.json();
  Wire.add(answer.wire, payload.method || path);
  return answer;
}

async function call(method, params) {
  const answer = await api("call", body(method, params));
  if (answer.error) showError(answer.error);  // cleared by the next action, not the next call
  return answer.error ? null : answer.result;
}

// A streaming call: onEvent gets each StreamResponse as it arrives.
// The Stop button aborts it: the inspector then closes the call to the agent,
// and the wire view marks what was still open as cancelled by the page.
async function stream(method, params, onEvent) {
  const stopping = new AbortController();
  $("stop").onclick = () => stopping.abort();
  $("stop").disabled = false;
  try {
    await readStream(method, params, onEvent, stopping.signal);
  } catch (e) {
    if (!stopping.signal.aborted) throw e;
    Wire.stopped(method);
  } finally {
    $("stop").disabled = true;
  }
}

async function readStream(method, params, onEvent, signal) {
  const resp = await fetch("api/stream", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body(method, params)), signal });
  if (!resp.ok) { showError({ reason: `HTTP ${resp.status}`, message: await resp.text() }); return; }
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let kind = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) kind = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (!data) continue;  // comments only (keep-alives): no event
      if (kind === "wire") { Wire.update(JSON.parse(data), method); continue; }
      if (kind === "error") { showError(JSON.parse(data)); return; }
      if (kind === "end") return;
      onEvent(JSON.parse(data));
    }
  }
}

// -- sending --

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function newId() {
  return crypto.randomUUID ? crypto.randomUUID()
    : `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`;
}

async function message() {
  const parts = [];
  const text = $("text").value;
  if (text.trim()) parts.push({ text });
  const file = $("file").files[0];
  if (file) parts.push({ raw: await readFile(file), filename: file.name,
                         mediaType: file.type || "application/octet-stream" });
  const data = $("data").value.trim();
  if (data) parts.push({ data: JSON.parse(data) });
  const msg = { messageId: newId(), role: "ROLE_USER", parts };
  if ($("task-id").value.trim()) msg.taskId = $("task-id").value.trim();
  if ($("context-id").value.trim()) msg.contextId = $("context-id").value.trim();
  return msg;
}

function setState(s) {
  const node = $("state");
  node.textContent = shortState(s);
  node.dataset.state = shortState(s);
}

function setTask(id) {
  state.taskId = id;
  $("current-task").textContent = id ? `task ${id}` : "";
}

function partNode(part) {
  if (part.text !== undefined) return el("span", { className: "text", textContent: part.text });
  if (part.data !== undefined) return el("pre", { className: "data",
                                                   textContent: JSON.stringify(part.data, null, 2) });
  const name = part.filename || "file";
  if (part.url) return el("a", { href: part.url, textContent: name, target: "_blank" });
  const bytes = Uint8Array.from(atob(part.raw || ""), (c) => c.charCodeAt(0));
  const href = URL.createObjectURL(new Blob([bytes], { type: part.mediaType || "" }));
  return el("a", { href, download: name, className: "file", textContent: `⬇ ${name}` });
}

// What the agent says: a direct reply, or the message of a status (the
// question of an INPUT_REQUIRED task, the reason of a failure).
function agentSaid(msg) {
  $("timeline").append(el("li", { className: "message agent" }, "agent: ",
                          ...(msg.parts || []).map(partNode)));
}

function showEvent(event) {
  const line = (kind, ...content) => $("timeline").append(el("li", { className: kind }, ...content));
  if (event.task) {
    if (event.task.id !== state.taskId) {  // a new task: show it while it runs
      openTask(event.task.id);
      listTasks();
    }
    setTask(event.task.id);
    setState(event.task.status && event.task.status.state);
    line("task", `task ${event.task.id}: ${shortState(event.task.status && event.task.status.state)}`);
    for (const a of event.task.artifacts || []) showArtifact(a, false);
    if (event.task.status && event.task.status.message) agentSaid(event.task.status.message);
  } else if (event.statusUpdate) {
    const s = event.statusUpdate.status || {};
    setState(s.state);
    if ($("detail-id").textContent === event.statusUpdate.taskId) {
      $("detail-state").textContent = shortState(s.state);
      $("detail-state").dataset.state = shortState(s.state);
      $("cancel").disabled = FINAL.includes(shortState(s.state));
    }
    line("status", el("span", { className: "state", dataset: { state: shortState(s.state) },
                                textContent: shortState(s.state) }));
    if (s.message) agentSaid(s.message);
  } else if (event.artifactUpdate) {
    const u = event.artifactUpdate;
    showArtifact(u.artifact, u.append);
  } else if (event.message) {
    agentSaid(event.message);
  }
}

// Chunks of one artifact (append) go on in place, in the artifact's own line.
function showArtifact(artifact, append) {
  const id = artifact.artifactId;
  let node = $("timeline").querySelector(`li.artifact[data-artifact-id="${CSS.escape(id)}"]`);
  if (!node || !append) {
    node = el("li", { className: "artifact", dataset: { artifactId: id } },
              el("span", { className: "name", textContent: `${artifact.name || id}: ` }));
    $("timeline").append(node);
  }
  for (const part of artifact.parts || []) {
    const chunk = partNode(part);
    chunk.classList.add("chunk");
    node.append(chunk);
  }
}

async function send() {
  showError(null);
  let msg;
  try { msg = await message(); } catch (e) { showError({ reason: "bad input", message: String(e) }); return; }
  if (!msg.parts.length) { showError({ reason: "empty", message: "write text, pick a file or give data" }); return; }
  $("timeline").replaceChildren(el("li", { className: "user", textContent: `you: ${$("text").value}` }));
  setTask("");
  $("send").disabled = true;
  try {
    if ($("mode-stream").checked) {
      await stream("SendStreamingMessage", { message: msg }, showEvent);
    } else {
      const result = await call("SendMessage", { message: msg });
      if (result) showEvent(result.task ? { task: result.task } : { message: result.message });
    }
  } finally {
    $("send").disabled = false;
  }
  await listTasks();
  if (state.taskId) await openTask(state.taskId);
}

// -- tasks --

async function listTasks() {
  const params = { pageSize: Number($("page-size").value) || 10,
                   pageToken: state.pages[state.page] };
  if ($("filter-state").value) params.status = $("filter-state").value;
  if ($("filter-context").value.trim()) params.contextId = $("filter-context").value.trim();
  const result = await call("ListTasks", params);
  if (!result) return;
  const tasks = result.tasks || [];
  $("task-list").replaceChildren(...tasks.map((t) => el("tr", {
    dataset: { taskId: t.id }, onclick: () => openTask(t.id) },
    el("td", {}, el("code", { textContent: t.id })),
    el("td", { className: "state", textContent: shortState(t.status && t.status.state) }),
    el("td", {}, el("code", { textContent: t.contextId || "" })),
    el("td", { textContent: (t.status && t.status.timestamp) || "" }))));
  state.next = result.nextPageToken || "";
  $("prev").disabled = state.page === 0;
  $("next").disabled = !state.next;
  $("page-info").textContent = `page ${state.page + 1} · ${result.totalSize || 0} tasks`;
}

function restartPaging() { state.pages = [""]; state.page = 0; return listTasks(); }

// The detail shows the task asked for last: an answer to an earlier ask that
// arrives after it (a slow GetTask) is dropped, not drawn over it.
let opened = 0;

async function openTask(id) {
  const ask = ++opened;
  const task = await call("GetTask", { id });
  if (!task || ask !== opened) return;
  $("detail").hidden = false;
  $("detail-id").textContent = task.id;
  const s = shortState(task.status && task.status.state);
  $("detail-state").textContent = s;
  $("detail-state").dataset.state = s;
  $("cancel").disabled = FINAL.includes(s);
  $("artifacts").replaceChildren(...(task.artifacts || []).map((a) => el("div",
    { className: "artifact", dataset: { artifactId: a.artifactId } },
    el("h4", { textContent: a.name || a.artifactId }), ...(a.parts || []).map(partNode))));
  $("history").replaceChildren(...(task.history || []).map((m) => el("li",
    { className: m.role === "ROLE_USER" ? "user" : "agent" },
    `${m.role === "ROLE_USER" ? "user" : "agent"}: `, ...(m.parts || []).map(partNode))));
  const configs = await api("call", body("ListTaskPushNotificationConfigs", { taskId: id }));
  if (ask !== opened) return;
  const list = configs.result ? configs.result.configs || [] : [];
  $("push-configs").replaceChildren(...(list.length ? list.map((c) =>
    el("li", { textContent: `${c.id}: ${c.url}` })) : [el("li", { textContent: "none" })]));
}

async function cancel() {
  const task = await call("CancelTask", { id: $("detail-id").textContent });
  if (task) await openTask(task.id);
  await listTasks();
}

window.addEventListener("DOMContentLoaded", () => {
  $("connect").onclick = connect;
  $("send").onclick = send;
  $("clear").onclick = () => { $("timeline").replaceChildren(); setState(""); setTask(""); };
  $("refresh").onclick = restartPaging;
  $("filter-state").onchange = restartPaging;
  $("filter-context").onchange = restartPaging;
  $("page-size").onchange = restartPaging;
  $("next").onclick = () => { state.pages[++state.page] = state.next; return listTasks(); };
  $("prev").onclick = () => { state.page = Math.max(0, state.page - 1); return listTasks(); };
  $("cancel").onclick = cancel;
  $("reload-detail").onclick = () => openTask($("detail-id").textContent);
  $("follow-up").onclick = () => { $("task-id").value = $("detail-id").textContent; $("text").focus(); };
  $("headers").value = sessionStorage.getItem("a2a-inspector-headers") || "";
  $("headers").oninput = headersChanged;
  headersChanged();
  $("wire-clear").onclick = () => Wire.clear();
  $("wire-pretty").onchange = () => Wire.rerender();
  connect();
});
