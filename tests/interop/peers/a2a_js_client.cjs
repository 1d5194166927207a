// The official @a2a-js/sdk client, its gRPC transport only, resolving our card:
// NODE_PATH=... node a2a_js_client.cjs BASE_URL   (prints what it saw as JSON)
// CommonJS, so that NODE_PATH finds the packages installed under .interop/node.
const { randomUUID } = require("node:crypto");
const { Role } = require("@a2a-js/sdk");
const { ClientFactory, ClientFactoryOptions } = require("@a2a-js/sdk/client");
const { GrpcTransportFactory } = require("@a2a-js/sdk/client/grpc");

const message = (text, taskId = "") => ({
  messageId: randomUUID(), contextId: "", taskId, role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "",
            mediaType: "" }],
  metadata: undefined, extensions: [], referenceTaskIds: [],
});
const request = (text, taskId) => ({ tenant: "", message: message(text, taskId),
                                     configuration: undefined, metadata: undefined });
const kind = (e) => e.payload.$case === "statusUpdate"
  ? `status:${e.payload.value.status.state}` : e.payload.$case;

async function main(base) {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new GrpcTransportFactory()],  // gRPC only: the card's GRPC interface or nothing
    preferredTransports: ["GRPC"],
  }));
  const client = await factory.createFromUrl(base);
  const seen = {};
  const sent = await client.sendMessage(request("hello from a2a-js"));
  seen.send = { id: Boolean(sent.id), state: sent.status?.state,
                artifact: sent.artifacts?.[0]?.parts?.[0]?.content?.value };
  const events = [];
  for await (const e of client.sendMessageStream(request("stream 3"))) events.push(e);
  seen.stream = events.map(kind);
  const streamed = events[0].payload.value;
  const got = await client.getTask({ tenant: "", id: streamed.id, historyLength: undefined });
  seen.get = { sameId: got.id === streamed.id, chunks: got.artifacts[0].parts.length };
  try {
    await client.getTask({ tenant: "", id: "no-such-task", historyLength: undefined });
    seen.notFound = "no error";
  } catch (err) {
    seen.notFound = err.constructor.name;
  }
  return seen;
}

main(process.argv[2]).then(
  (seen) => { console.log(JSON.stringify(seen)); process.exit(0); },
  (err) => { console.error(err); process.exit(1); });
