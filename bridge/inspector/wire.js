// The wire view: every exchange the inspector had with the agent for this page,
// as sent and received (a2a_grpc/client/wire.py records them): HTTP request,
// headers and body, response or SSE frames; gRPC method, metadata, messages as
// JSON and status. Times are ms after the request went out.
"use strict";

const Wire = (() => {
  const exchanges = new Map();  // id -> the exchange so far, with its label
  const list = () => document.getElementById("exchanges");
  const pretty = () => document.getElementById("wire-pretty").checked;

  function body(text) {
    if (!pretty() || !text) return text;
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  function lines(pairs) {
    return pairs.map(([k, v]) => `${k}: ${v}`).join("\n");
  }

  function requestText(x) {
    const r = x.request;
    if (x.binding === "GRPC") {
      return `${r.method}  @ ${r.target}\n${lines(r.metadata)}\n\n${JSON.stringify(r.message, null, 2)}`;
    }
    return `${r.method} ${r.url}\n${lines(Object.entries(r.headers))}\n\n${body(r.body)}`;
  }

  function responseText(x) {
    const r = x.response;
    if (x.binding === "GRPC") {
      const parts = [];
      if (r.initialMetadata) parts.push(lines(r.initialMetadata));
      if (r.message) parts.push(JSON.stringify(r.message, null, 2));
      if (r.code) parts.push(`status: ${r.code}${r.details ? ` (${r.details})` : ""}` +
                             (r.trailingMetadata && r.trailingMetadata.length
                               ? `\n${lines(r.trailingMetadata)}` : ""));
      return parts.join("\n\n");
    }
    if (r.status === undefined) return "";
    return `HTTP ${r.status} ${r.reason}\n${lines(Object.entries(r.headers))}\n\n${body(r.body)}`;
  }

  function summary(x) {
    const r = x.request;
    const what = x.binding === "GRPC" ? `gRPC ${r.method}` : `${r.method} ${r.url}`;
    const status = x.binding === "GRPC" ? (x.response.code || "…")
      : (x.response.status !== undefined ? `${x.response.status} ${x.response.reason}` : "…");
    const timing = x.ended !== null ? `${x.ended} ms` : (x.answered !== null ? `${x.answered} ms…` : "…");
    const frames = x.frames.length ? ` · ${x.frames.length} ${x.binding === "GRPC" ? "messages" : "frames"}` : "";
    const error = x.error ? ` · ${x.error}` : "";
    return `#${x.id} ${x.label} · ${what} → ${status} · ${timing}${frames}${error}`;
  }

  function frameNode(x, f) {
    const text = x.binding === "GRPC" ? JSON.stringify(f.message, null, 2) : f.raw;
    return el("li", { className: "frame" }, el("span", { className: "at", textContent: `+${f.at} ms` }),
              el("pre", { textContent: text }));
  }

  function render(x) {
    let node = list().querySelector(`li.exchange[data-id="${x.id}"]`);
    const open = node ? node.querySelector("details").open : false;
    const fresh = el("li", { className: "exchange", dataset: { id: x.id, binding: x.binding, label: x.label } },
      el("details", { open },
        el("summary", { textContent: summary(x) }),
        el("div", { className: "sides" },
          el("div", {}, el("h4", { textContent: `Request · ${new Date(x.started * 1000).toISOString().slice(11, 23)}` }),
             el("pre", { className: "request", textContent: requestText(x) })),
          el("div", {}, el("h4", { textContent: `Response${x.answered !== null ? ` · +${x.answered} ms` : ""}` }),
             el("pre", { className: "response", textContent: responseText(x) }))),
        x.frames.length ? el("ol", { className: "frames" }, ...x.frames.map((f) => frameNode(x, f))) : ""));
    if (node) node.replaceWith(fresh); else list().prepend(fresh);
    document.getElementById("wire-count").textContent = `(${exchanges.size})`;
  }

  // An exchange, whole or (streams) an update carrying the frames from `framesFrom` on.
  function update(x, label) {
    const known = exchanges.get(x.id);
    const frames = known ? known.frames.slice(0, x.framesFrom).concat(x.frames) : x.frames;
    const merged = { ...x, frames, label: known ? known.label : label };
    exchanges.set(x.id, merged);
    render(merged);
  }

  function rerender() { for (const x of exchanges.values()) render(x); }

  // The page stopped the stream labelled `label`: its exchanges not yet ended
  // were cancelled by the client (the inspector closes them on its side).
  function stopped(label) {
    for (const x of exchanges.values()) {
      if (x.label !== label || x.ended !== null) continue;
      if (x.binding === "GRPC") x.response = { ...x.response, code: "CANCELLED", details: "stopped by the page" };
      else x.error = "stopped by the page";
      x.ended = Math.round(Date.now() - x.started * 1000);
      render(x);
    }
  }

  return {
    add(items, label) { for (const x of items || []) update(x, label); },
    update,
    clear() { exchanges.clear(); list().replaceChildren(); document.getElementById("wire-count").textContent = ""; },
    rerender,
    stopped,
  };
})();
