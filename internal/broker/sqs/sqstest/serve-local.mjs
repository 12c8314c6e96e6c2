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
// Under a Go test binary (FAUXQS_EXIT_ON_STDIN_END=1, set by sqstest.Start),
// exit when the parent closes our stdin, so a crashed test leaves no emulator
// behind. Started by hand (`make sqs-emulator`, in the background or not) it
// runs until SIGINT or SIGTERM.
if (process.env.FAUXQS_EXIT_ON_STDIN_END === "1") {
  process.stdin.on("end", stop);
  process.stdin.resume();
}
