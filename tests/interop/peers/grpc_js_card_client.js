// grpc-js reaching an agent of a server hosting several, from its card: the
// card's GRPC interface gives the address and the tenant every request sets.
// Usage: node grpc_js_card_client.js CARD_URL PROTO_DIR INCLUDE_DIR...
// Prints one JSON object: the card's name, the tenant, the sent task's state
// and artifact text, and the code of a GetTask of it without the tenant.
"use strict";
const grpc = require("@grpc/grpc-js");
const loader = require("@grpc/proto-loader");
const path = require("path");

const [cardUrl, protoDir, ...includes] = process.argv.slice(2);
const def = loader.loadSync(path.join(protoDir, "a2a.proto"), {
  longs: String, enums: String, defaults: false, oneofs: true,
  includeDirs: [protoDir, ...includes],
});
const A2AService = grpc.loadPackageDefinition(def).lf.a2a.v1.A2AService;

async function main() {
  const card = await (await fetch(cardUrl)).json();
  const iface = card.supportedInterfaces.find((i) => i.protocolBinding === "GRPC");
  const client = new A2AService(iface.url, grpc.credentials.createInsecure());
  const meta = () => { const m = new grpc.Metadata(); m.set("a2a-version", "1.0"); return m; };
  const unary = (method, req) => new Promise((resolve, reject) =>
    client[method](req, meta(), (err, resp) => (err ? reject(err) : resolve(resp))));
  const sent = await unary("SendMessage", {
    tenant: iface.tenant,
    message: { messageId: `node-${Math.random()}`, role: "ROLE_USER", parts: [{ text: "hello" }] },
  });
  const got = await unary("GetTask", { tenant: iface.tenant, id: sent.task.id });
  let untenanted = "OK";
  try { await unary("GetTask", { id: sent.task.id }); } catch (err) { untenanted = err.code; }
  console.log(JSON.stringify({
    name: card.name, tenant: iface.tenant, state: got.status.state,
    text: got.artifacts[0].parts[0].text, untenanted: grpc.status[untenanted] || untenanted,
  }));
  client.close();
}

main().catch((err) => { console.error(err); process.exit(1); });
