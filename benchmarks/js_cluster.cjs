// The official JavaScript SDK's server (js_server.cjs) under Node's cluster
// module: N processes sharing its ports, the primary handing connections out
// in turn, as users scale a Node server over the cores of one machine
// (benchmarks/cores.py). Its tasks live in each worker's memory: a GetTask
// reaching another worker than the one that made the task is not found.
// Usage: node js_cluster.cjs HTTP_PORT GRPC_PORT WORKERS
"use strict";
const cluster = require("node:cluster");

if (cluster.isPrimary) {
  const workers = Number(process.argv[4] || 1);
  cluster.schedulingPolicy = cluster.SCHED_RR;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on("exit", (worker, code) => {
    console.error(`worker ${worker.process.pid} exited (${code})`);
  });
  process.on("SIGTERM", () => {
    for (const id in cluster.workers) cluster.workers[id].process.kill("SIGTERM");
    process.exit(0);
  });
} else {
  require("./js_server.cjs");
}
