package main

// lintInfraMutants break `brighter lint --infra`: the rules only
// infrastructure files make possible, the --live rules judged against what
// the files declare, and the Terraform reader's references. No message
// flows through lint, so no conformance row can observe them: the corpus
// test of internal/cmd/lint (each rule's trigger and ok file under
// testdata/infra/terraform) and the readers' tests kill them.
var lintInfraMutants = []mutant{
	{Name: "lint-infra-dead-letter-target-ignored", What: "dead-letter-target-mismatch never fires: a redrive policy that sends to another queue than the file names passes",
		File: "internal/lint/live/infra.go",
		Old:  `if got == "" || got == infra.ShortName(want) {`,
		New:  `if true {`,
		Run:  "^TestLintInfraCorpus$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-redrive-allow-any-reference", What: "redrive-allow-forbids-source takes a source ARN that refers to another queue for one decided at apply time, and passes a dead-letter queue that allows only another source",
		File: "internal/lint/live/infra.go",
		Old:  `case !a.IsKnown() && a.Ref == "":`,
		New:  `case !a.IsKnown():`,
		Run:  "^TestLintInfraCorpus$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-retention-no-outage-allowance", What: "retention-shorter-than-budget leaves out the dead-letter outage allowance: a retention that outlasts requeueCount x requeueDelay by minutes passes",
		File: "internal/lint/live/infra.go",
		Old:  `if v >= worst {`,
		New:  `if v >= worst-lint.DeadLetterOutageAllowance {`,
		Run:  "^TestLintInfraCorpus$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-ordering-unchecked", What: "delivery-order-drift never fires: a Pub/Sub subscription declared with message ordering passes a file that does not ask for it",
		File: "internal/lint/live/infra.go",
		Old:  `if c.r.Ordering.State != infra.Unknown && got != want {`,
		New:  `if false && got != want {`,
		Run:  "^TestLintInfraCorpus$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-require-all-ignored", What: "--infra-require-all leaves infra-undeclared a warning: a channel no file declares does not fail the build",
		File: "internal/lint/live/infra.go",
		Old:  `if o.RequireAll {`,
		New:  `if false {`,
		Run:  "^TestLintInfraRequireAll$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-lease-unjudged", What: "the lease rules are not judged against a queue's declared visibility timeout when the file leaves sqs.visibilityTimeout to the queue",
		File: "internal/lint/live/infra.go",
		Old:  `if c.s.SQS == nil || c.s.SQS.VisibilityTimeout != 0 {`,
		New:  `if true {`,
		Run:  "^TestLintInfraCorpus$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-findings-in-subscriptions-file", What: "the --live rules judged against infrastructure files point at the subscriptions file, not at the setting in the infrastructure file",
		File: "internal/lint/live/live.go",
		Old:  `return lint.Relocate(fd, pos)`,
		New:  `return fd`,
		Run:  "^TestLintInfraCorpus$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-infra-tf-references-dropped", What: "the .tf reader forgets which resource an unknown value refers to, so a redrive policy's target can no longer be followed",
		File: "internal/lint/infra/terraform/hcl.go",
		Old:  `f.ref = refOf(e)`,
		New:  `f.ref = ""`,
		Run:  "^TestReadHCL_ValuesUnknownsAndPositions$", Pkg: "./internal/lint/infra/terraform"},
}
