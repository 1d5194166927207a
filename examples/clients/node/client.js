// A Node.js client of an a2a-grpc server (or any A2A 1.0 gRPC server): grpc-js
// with the stubs @grpc/proto-loader builds at run time from the proto files
// `a2a-grpc proto --out DIR` writes. It sends a message, streams one, gets the
// task back and asks for one that does not exist, checking each answer; it
// exits 1 at the first one that is wrong.
//
//   npm install && node client.js 127.0.0.1:50051 DIR
//
// See docs/languages/node.md.
"use strict";
const path = require("path");
const grpc = require("@grpc/grpc-js");
const loader = require("@grpc/proto-loader");

const [target, protos] = process.argv.slice(2);
if (!target || !protos) {
  console.error("usage: node client.js HOST:PORT PROTO_DIR");
  process.exit(2);
}
// google/protobuf/*.proto come with proto-loader; google/api/*.proto with DIR.
const definition = loader.loadSync(path.join(protos, "a2a.proto"), {
  includeDirs: [protos], enums: String, longs: String, defaults: false, oneofs: true,
});
const { A2AService } = grpc.loadPackageDefinition(definition).lf.a2a.v1;
const client = new A2AService(target, grpc.credentials.createInsecure());

// Every call names the protocol version it speaks (A2A-Version, spec 3.6).
function metadata() {
  const m = new grpc.Metadata();
  m.set("a2a-version", "1.0");
  return m;
}
const deadline = () => ({ deadline: Date.now() + 30000 });
let counter = 0;
const request = (text) => ({
  message: { messageId: `node-${Date.now()}-${++counter}`, role: "ROLE_USER", parts: [{ text }] },
});
const call = (method, req) => new Promise((resolve, reject) =>
  client[method](req, metadata(), deadline(), (err, resp) => (err ? reject(err) : resolve(resp))));

function fail(what) {
  console.error(`FAILED: ${what}`);
  process.exit(1);
}

async function main() {
  const sent = await call("SendMessage", request("hello from node"));
  if (sent.payload !== "task" || sent.task.status.state !== "TASK_STATE_COMPLETED") {
    fail(`SendMessage: expected a completed task, got ${JSON.stringify(sent)}`);
  }
  const task = sent.task;
  console.log(`send ${task.status.state} ${task.artifacts[0].parts[0].text}`);

  const kinds = await new Promise((resolve, reject) => {
    const seen = [];
    const stream = client.SendStreamingMessage(request("stream 2"), metadata(), deadline());
    stream.on("data", (event) => {
      if (event.payload === "statusUpdate") seen.push(event.statusUpdate.status.state);
      else if (event.payload === "artifactUpdate") seen.push("artifact");
      else seen.push(event.payload);
    });
    stream.on("error", reject);
    stream.on("end", () => resolve(seen));
  });
  console.log(`stream ${kinds.join(" ")}`);

  const got = await call("GetTask", { id: task.id });
  if (got.id !== task.id) fail(`GetTask: asked for ${task.id}, got ${got.id}`);
  console.log(`get ${got.status.state}`);

  try {
    await call("GetTask", { id: "no-such-task" });
    fail("GetTask of an unknown id: expected NOT_FOUND, got a task");
  } catch (err) {
    if (err.code !== grpc.status.NOT_FOUND) fail(`GetTask of an unknown id: ${err.message}`);
  }
  console.log("unknown NotFound");
  client.close();
}

main().catch((err) => fail(err.message));
