package lint

// localRules are the rules judged on the local file system
// (internal/lint/local): what consume opens or runs at start-up.
var localRules = []Rule{
	{
		ID: RuleHandlerCommandNotFound, Severity: SeverityError,
		Summary: "an exec handler's command, or the interpreter its #! line names, cannot be started (consume refuses to start)",
		Explanation: `An exec handler runs handler.command for each message. consume looks the
command up when it starts the subscription, as exec.LookPath does: a path
(one with a slash; a relative one is relative to the subscriptions file's
directory) must name an executable file, and a bare name (python3) must be
found on PATH. A command that starts with a #! line (a script) is started
by the kernel through the interpreter that line names, so consume checks
that interpreter as it checks the command: an absolute path that must name
an executable file, or, for #!/usr/bin/env NAME, a NAME found on PATH; a
dynamically linked program is started through its loader (PT_INTERP, such
as /lib/ld-musl-x86_64.so.1), which must exist. When any of these is not so, consume refuses to start (exit 2): otherwise every
run would fail to start and every message would spend its budget.

It is an error, as consume's refusal is. This rule reads the file system
where lint runs, with lint's PATH: a command that is built or installed
later (a CI job that lints before it builds the handler, a PATH or an
interpreter that only the deployed image has) is reported although consume,
run later in that image, would find it. Lint where the command exists (in
the image, or after the build). lint says nothing about the program itself:
only that it can be started.

Fix: correct handler.command or the script's #! line, install the
interpreter, make the file executable (chmod +x), or lint where and after
the command exists.`,
	},
	{
		ID: RuleHandlerTLSUnreadable, Severity: SeverityError,
		Summary: "an http handler's tls files cannot be loaded (consume refuses to start)",
		Explanation: `An http handler's handler.tls names PEM files that consume loads when it
starts the subscription: caFile (CA certificates trusted besides the
system's), certFile and keyFile (a client certificate and its key, for
mutual TLS). A relative path is relative to the subscriptions file's
directory. A file that does not exist or cannot be read, a caFile with no
PEM certificate, or a certificate and key that are not a pair makes
consume refuse to start (exit 2).

It is an error, as consume's refusal is. This rule reads the file system
where lint runs: certificates are often mounted only where the consumer is
deployed (a secret volume), so a file missing here may be there.

Fix: correct the paths, or lint where the certificates are mounted.`,
	},
	{
		ID: RuleMemorySeedInvalid, Severity: SeverityError,
		Summary: "a memory transport's seed file is missing or does not parse (consume refuses to start)",
		Explanation: `memory.seed names a file of messages, one JSON record per line (the shape
brighter dlq peek -o json and memory.output write), that consume loads into
the subscription's queue when it starts. A relative path is relative to the
subscriptions file's directory. A seed file that does not exist, cannot be
read or holds a line that is not such a record makes consume refuse to
start (exit 2); the finding names the line.

This rule reads the file system where lint runs: a seed file written later
(by a test harness, say) is reported although consume, run after it, would
load it.

Fix: correct memory.seed, or the record on the line named.`,
	},
	{
		ID: RuleMemoryOutputUnwritable, Severity: SeverityError,
		Summary: "a memory transport's output file cannot be written (consume refuses to start)",
		Explanation: `memory.output names the file consume writes, when it stops, every message
its memory queues still hold: those the handlers left and those dead-lettered
or routed as invalid, which brighter dlq reads back from it. A relative path
is relative to the subscriptions file's directory. consume checks at start-up
that it can write there, and refuses to start (exit 2) when the file is a
directory or may not be written, or when it does not exist and its directory
does not exist or no file may be created in it: found only at stop, the
messages would be lost.

This rule reads the file system where lint runs: a directory made later (by a
test harness, say) is reported although consume, run after it, would write
there.

Fix: correct memory.output, or make its directory.`,
	},
}
