// serve-local.mjs starts fauxqs (npm fauxqs@1.9.2, installed at the repository
// root by `npm ci`) bound to 127.0.0.1 only: fauxqs's own CLI listens on every
// interface and has no bind option (docs/emulators.md).
// FAUXQS_PORT=0 picks a free port; the first line on stdout is
// "fauxqs listening on http://127.0.0.1:<port>", which sqstest.Start reads.
import { buildApp } from "fauxqs";

const app = buildApp({ logger: process.env.FAUXQS_LOGGER === "true" });
const port = Number(process.env.FAUXQS_PORT || 4566);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`fauxqs: FAUXQS_PORT=${process.env.FAUXQS_PORT} is not a port (0..65535)`);
  process.exit(2);
}
let addr;
try {
  addr = await app.listen({ port, host: "127.0.0.1" });
} catch (err) {
  // One line, not a stack trace: a busy port is the usual cause.
  const why = err.code === "EADDRINUSE" ? "is in use (another emulator?); set FAUXQS_PORT to another port" : err.message;
  console.error(`fauxqs: cannot listen on 127.0.0.1:${port}: ${why}`);
  process.exit(1);
}
console.log("fauxqs listening on " + addr);

const stop = async () => {
  await app.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("SIGHUP", stop);
// Started by `make sqs-emulator` (FAUXQS_EXIT_WITH_PARENT=1, the recipe execs
// node, so make is the parent): make passes no signal on when it is stopped
// by its PID (SIGTERM, SIGINT, SIGKILL), so stop when the parent is gone
// (this process is re-parented), freeing the port instead of holding it as
// an orphan.
if (process.env.FAUXQS_EXIT_WITH_PARENT === "1") {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 200).unref();
}
// Under a Go test binary (FAUXQS_EXIT_ON_STDIN_END=1, set by sqstest.Start),
// exit when the parent closes our stdin, so a crashed test leaves no emulator
// behind. Started by hand (`node serve-local.mjs`) it runs until SIGINT,
// SIGTERM or SIGHUP; under make, also until make ends.
if (process.env.FAUXQS_EXIT_ON_STDIN_END === "1") {
  process.stdin.on("end", stop);
  process.stdin.resume();
}
