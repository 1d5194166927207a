// The official JavaScript SDK's server for `make bench` (benchmarks/servers.py,
// name "js"): @a2a-js/sdk's DefaultRequestHandler with its InMemoryTaskStore,
// JSON-RPC at / and HTTP+JSON at the root on Express, gRPC on @grpc/grpc-js,
// and an agent doing what ours and the Python SDK's reference agent do:
// `hello` -> WORKING, one artifact `echo: hello`, COMPLETED; `stream N` -> N
// chunks of one artifact (append after the first, the last marked last).
// Usage: node js_server.cjs HTTP_PORT GRPC_PORT   (NODE_PATH: the bench's node_modules)
"use strict";
const express = require("express");
const grpc = require("@grpc/grpc-js");
const { TaskState, Role } = require("@a2a-js/sdk");
const {
  InMemoryTaskStore, DefaultRequestHandler, AgentEvent,
} = require("@a2a-js/sdk/server");
const {
  agentCardHandler, jsonRpcHandler, restHandler, UserBuilder,
} = require("@a2a-js/sdk/server/express");
const { grpcService, A2AService } = require("@a2a-js/sdk/server/grpc");

const [httpPort, grpcPort] = process.argv.slice(2).map(Number);
const now = () => new Date().toISOString();
const text = (value) => ({ content: { $case: "text", value }, metadata: undefined,
                           filename: "", mediaType: "text/plain" });

function status(taskId, contextId, state) {
  return AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined,
                                   status: { state, timestamp: now(), message: undefined } });
}

function artifact(taskId, contextId, artifactId, name, value, append, lastChunk) {
  return AgentEvent.artifactUpdate({
    taskId, contextId, append, lastChunk, metadata: undefined,
    artifact: { artifactId, name, description: "", parts: [text(value)], metadata: undefined,
                extensions: [] },
  });
}

class Echo {
  async execute(context, bus) {
    const { taskId, contextId, userMessage } = context;
    const part = userMessage.parts.find((p) => p.content && p.content.$case === "text");
    const said = part ? part.content.value : "";
    if (!context.task) {
      bus.publish(AgentEvent.task({
        id: taskId, contextId, artifacts: [], history: [userMessage], metadata: undefined,
        status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
      }));
    }
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING));
    const streamed = /^stream (\d+)$/.exec(said);
    if (streamed) {
      const n = Number(streamed[1]);
      for (let i = 1; i <= n; i++) {
        bus.publish(artifact(taskId, contextId, "c", "chunks", `chunk ${i}/${n}`, i > 1, i === n));
      }
    } else {
      bus.publish(artifact(taskId, contextId, "echo", "echo", `echo: ${said}`, false, true));
    }
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.publish(status(taskId, "", TaskState.TASK_STATE_CANCELED));
    bus.finished();
  }
}

const base = `http://127.0.0.1:${httpPort}`;
const card = {
  name: "JS SDK reference agent", description: "echoes", version: "1.0",
  supportedInterfaces: [
    { url: `${base}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: base, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
    { url: `127.0.0.1:${grpcPort}`, protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" },
  ],
  provider: undefined, documentationUrl: "", securitySchemes: {}, securityRequirements: [],
  capabilities: { streaming: true, pushNotifications: false, extensions: [],
                  extendedAgentCard: false },
  defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "echoes", tags: ["demo"], examples: [],
             inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};

const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Echo());
const options = { requestHandler, userBuilder: UserBuilder.noAuthentication };
const app = express();
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: requestHandler }));
app.use("/", jsonRpcHandler(options));
app.use("/", restHandler(options));
const server = new grpc.Server();
server.addService(A2AService, grpcService(options));
server.bindAsync(`127.0.0.1:${grpcPort}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
  app.listen(httpPort, "127.0.0.1", (error) => {
    if (error) throw error;
    console.log(`listening: gRPC on 127.0.0.1:${grpcPort}, HTTP on 127.0.0.1:${httpPort}`);
  });
});
