// serve-local.mjs starts fauxqs (npm fauxqs@1.9.2, installed at the repository
// root by `npm ci`) bound to 127.0.0.1 only: fauxqs's own CLI listens on every
// interface and has no bind option (see local-brokers.md §1.1 in the shared reference).
// FAUXQS_PORT=0 picks a free port; the first line on stdout is
// "fauxqs listening on http://127.0.0.1:<port>", which sqstest.Start reads.
import { buildApp } from "fauxqs";

const app = buildApp({ logger: process.env.FAUXQS_LOGGER === "true" });
const addr = await app.listen({ port: Number(process.env.FAUXQS_PORT ?? 4566), host: "127.0.0.1" });
console.log("fauxqs listening on " + addr);

const stop = async () => {
  await app.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// Exit when the parent (the Go test binary) closes our stdin.
process.stdin.on("end", stop);
process.stdin.resume();
