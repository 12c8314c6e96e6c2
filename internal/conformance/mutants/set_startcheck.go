package main

// startCheckMutants break what consume checks when it starts a
// subscription and lint checks the same way: an exec handler's #!
// interpreter (internal/execfile), an http handler's header values
// (internal/config) and the severity of a local-file-system rule whose
// finding consume refuses to start with. No message flows through a
// start-up check, so no conformance row can observe them: the packages'
// own tests kill them.
var startCheckMutants = []mutant{
	{Name: "exec-shebang-unchecked", What: "the start-up check looks the exec command up but not the interpreter its #! line names, so a script whose interpreter is missing passes lint and consume's start-up and then defers every message to its dead-letter queue",
		File: "internal/execfile/execfile.go",
		Old:  "\tif err := startable(resolved, path, 0); err != nil {\n",
		New:  "\tif err := startable(resolved, path, 0); err != nil && false {\n",
		Run:  "^(TestLook_TheCommandAndItsInterpreter|TestExec_RefusesACommandThatCannotStart|TestCheck_WhatConsumeRefusesToStart)$",
		Pkg:  "./internal/execfile ./internal/handler ./internal/lint/local"},
	{Name: "exec-shebang-env-unchecked", What: "a #!/usr/bin/env NAME line is taken as started once env itself is there, so a NAME on no directory of PATH passes the start-up check",
		File: "internal/execfile/execfile.go",
		Old:  "\tif filepath.Base(interp) != \"env\" {\n",
		New:  "\tif true || filepath.Base(interp) != \"env\" {\n",
		Run:  "^(TestLook_TheCommandAndItsInterpreter|TestExec_RefusesACommandThatCannotStart|TestCheck_WhatConsumeRefusesToStart)$",
		Pkg:  "./internal/execfile ./internal/handler ./internal/lint/local"},
	{Name: "exec-elf-loader-unchecked", What: "the start-up check does not read a dynamically linked program's loader (PT_INTERP), so a binary built for another C library passes and then fails to start on every message",
		File: "internal/execfile/execfile.go",
		Old:  "\tif bytes.HasPrefix(head, []byte(elf.ELFMAG)) {\n",
		New:  "\tif bytes.HasPrefix(head, []byte(elf.ELFMAG)) && false {\n",
		Run:  "^TestLook_ELFLoader$", Pkg: "./internal/execfile"},
	{Name: "config-header-value-unchecked", What: "an http handler header value with CR or LF is accepted by the subscriptions file, so lint passes a file whose handler consume refuses (exit 2)",
		File: "internal/config/handler.go",
		Old:  "\t\tcase ok && !httpguts.ValidHeaderFieldValue(v):\n",
		New:  "\t\tcase ok && false && !httpguts.ValidHeaderFieldValue(v):\n",
		Run:  "^(TestParse_BrokenFiles|TestConsumeRefusesWhatLintRefuses)$",
		Pkg:  "./internal/config ./internal/cmd/consume"},
	{Name: "lint-command-not-found-warning", What: "handler-command-not-found is a warning, so lint exits 0 on a file whose exec command consume refuses to start (exit 2)",
		File: "internal/lint/rule_local.go",
		Old:  "\t\tID: RuleHandlerCommandNotFound, Severity: SeverityError,\n",
		New:  "\t\tID: RuleHandlerCommandNotFound, Severity: SeverityWarning,\n",
		Run:  "^(TestCheck_WhatConsumeRefusesToStart|TestLint_RefusesWhatConsumeCannotStart)$",
		Pkg:  "./internal/lint/local ./internal/cmd/lint"},
	{Name: "lint-tls-unreadable-warning", What: "handler-tls-unreadable is a warning, so lint exits 0 on a file whose http handler's tls files consume refuses (exit 2)",
		File: "internal/lint/rule_local.go",
		Old:  "\t\tID: RuleHandlerTLSUnreadable, Severity: SeverityError,\n",
		New:  "\t\tID: RuleHandlerTLSUnreadable, Severity: SeverityWarning,\n",
		Run:  "^TestCheck_WhatConsumeRefusesToStart$",
		Pkg:  "./internal/lint/local"},
}

// startCheckEnvMutants break the subscriptions file's check of an exec
// handler's environment, which the handler refuses or no process takes.
var startCheckEnvMutants = []mutant{
	{Name: "config-exec-env-name-unchecked", What: "an exec handler env entry with an empty name passes the subscriptions file and lint, and consume refuses it at start-up (exit 2)",
		File: "internal/config/handler.go",
		Old:  "\t\tcase ve.key == \"\" || strings.ContainsAny(ve.key, \"=\\x00\"):\n",
		New:  "\t\tcase false:\n",
		Run:  "^(TestParse_BrokenFiles|TestConsumeRefusesWhatLintRefuses)$",
		Pkg:  "./internal/config ./internal/cmd/consume"},
	{Name: "config-exec-nul-unchecked", What: "an exec handler argument holding NUL passes start-up, and every run then fails to start and spends its message's budget",
		File: "internal/config/handler.go",
		Old:  "\t\tif strings.IndexByte(a, 0) < 0 {\n",
		New:  "\t\tif a != \"\\x00\" || true {\n",
		Run:  "^TestParse_BrokenFiles$", Pkg: "./internal/config"},
}
