package main

// outcomeMutants break what a command says about its own outcome: a lint
// whose infrastructure files could not be read, a Config Connector
// dead-letter topic named by reference, a dry-run replay to a destination
// that does not exist. No message flows through them, so no conformance
// row can observe them: the command tests kill them.
var outcomeMutants = []mutant{
	{Name: "lint-infra-unread-claims-clean", What: "lint --infra with an infrastructure file that cannot be read still writes its summary (\"no findings in 1 file\", a JSON summary, a successful SARIF run): the report passes for a clean result",
		File: "internal/cmd/lint/lint.go",
		Old:  `infraUnread = true`,
		New:  `infraUnread = false`,
		Run:  "^TestLintInfraUnreadableClaimsNoCleanResult$", Pkg: "./internal/cmd/lint"},
}
