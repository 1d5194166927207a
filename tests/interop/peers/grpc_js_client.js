// A client in another language: Node's grpc-js, with stubs built at run time
// from our proto/a2a.proto by @grpc/proto-loader. Prints one JSON object.
// Usage: node grpc_js_client.js TARGET PROTO_DIR INCLUDE_DIR...
"use strict";
const grpc = require("@grpc/grpc-js");
const loader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");
const path = require("path");

const [target, protoDir, ...includes] = process.argv.slice(2);
const def = loader.loadSync(path.join(protoDir, "a2a.proto"), {
  longs: String, enums: String, defaults: false, oneofs: true,
  includeDirs: [protoDir, ...includes],
});
const A2AService = grpc.loadPackageDefinition(def).lf.a2a.v1.A2AService;
const client = new A2AService(target, grpc.credentials.createInsecure());
const meta = () => { const m = new grpc.Metadata(); m.set("a2a-version", "1.0"); return m; };
const message = (text, extra = {}) => ({
  messageId: `node-${Math.random()}`, role: "ROLE_USER", parts: [{ text }], ...extra,
});
const unary = (method, req) => new Promise((resolve, reject) =>
  client[method](req, meta(), (err, resp) => (err ? reject(err) : resolve(resp))));

// google.rpc.Status from grpc-status-details-bin, decoded with protobufjs.
const root = new protobuf.Root();
root.resolvePath = (origin, target) => {
  for (const dir of includes) {
    const candidate = path.join(dir, target);
    try { require("fs").accessSync(candidate); return candidate; } catch (e) { /* next */ }
  }
  return target;
};
root.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"]);
const Status = root.lookupType("google.rpc.Status");
const ErrorInfo = root.lookupType("google.rpc.ErrorInfo");

function describe(err) {
  const raw = err.metadata.get("grpc-status-details-bin")[0];
  const status = Status.decode(raw);
  const info = status.details
    .filter((d) => d.type_url.endsWith("google.rpc.ErrorInfo"))
    .map((d) => ErrorInfo.decode(d.value))[0];
  return { code: err.code, statusCode: status.code, sameMessage: status.message === err.details,
           reason: info && info.reason, domain: info && info.domain };
}

async function main() {
  const seen = {};
  const sent = await unary("SendMessage", { message: message("hello from node") });
  seen.send = { payload: sent.payload, state: sent.task.status.state,
                artifact: sent.task.artifacts[0].parts[0].text };
  const got = await unary("GetTask", { id: sent.task.id, historyLength: 0 });
  seen.get = { sameId: got.id === sent.task.id, history: (got.history || []).length };
  seen.stream = await new Promise((resolve, reject) => {
    const kinds = [];
    const call = client.SendStreamingMessage({ message: message("stream 2") }, meta());
    call.on("data", (ev) => kinds.push(ev.payload === "statusUpdate"
      ? ev.statusUpdate.status.state : ev.payload));
    call.on("error", reject);
    call.on("end", () => resolve(kinds));
  });
  const listed = await unary("ListTasks", { pageSize: 1 });
  seen.list = { count: listed.tasks.length, total: listed.totalSize,
                hasNext: listed.nextPageToken !== "" };
  try {
    await unary("GetTask", { id: "no-such-task" });
    seen.notFound = null;
  } catch (err) {
    seen.notFound = describe(err);
  }
  try {
    await unary("SendMessage", { message: { role: "ROLE_USER", parts: [] } });
    seen.invalid = null;
  } catch (err) {
    seen.invalid = describe(err);
  }
  client.close();
  console.log(JSON.stringify(seen));
}

main().catch((err) => { console.error(err); process.exit(1); });
