package main

// infraReaderMutants break the CloudFormation and Kubernetes readers of
// lint --infra: what they resolve, what they leave Unknown, and the bounds
// that refuse hostile files. No message flows through a reader, so the
// readers' own tests kill them.
var infraReaderMutants = []mutant{
	{Name: "cfn-ssm-default-guessed", What: "an SSM parameter's Default (the parameter's name in Parameter Store) is taken as its value, so a retention of \"/orders/retention-seconds\" is checked as if fixed",
		File: "internal/lint/infra/cloudformation/intrinsics.go",
		Old:  `if p.def == nil || strings.HasPrefix(p.typ, "AWS::SSM::Parameter::") {`,
		New:  `if p.def == nil {`,
		Run:  "^TestRead_YAMLShortFormResolvesParametersAndRecordsReferences$", Pkg: "./internal/lint/infra/cloudformation"},
	{Name: "cfn-pseudo-parameter-guessed", What: "a pseudo parameter (AWS::Region, AWS::AccountId) resolves to an empty string instead of Unknown, so an ARN built with !Sub is checked as a guessed value",
		File: "internal/lint/infra/cloudformation/intrinsics.go",
		Old:  "if strings.HasPrefix(name, \"AWS::\") {\n\t\treturn unknown, true",
		New:  "if strings.HasPrefix(name, \"AWS::\") {\n\t\treturn val{state: infra.Known}, true",
		Run:  "^TestRead_YAMLShortFormResolvesParametersAndRecordsReferences$", Pkg: "./internal/lint/infra/cloudformation"},
	{Name: "cfn-getatt-reference-dropped", What: "!GetAtt DLQ.Arn is Unknown without recording DLQ, so a redrive target cannot be matched to the queue it names",
		File: "internal/lint/infra/cloudformation/intrinsics.go",
		Old:  "return val{state: infra.Unknown, ref: id}, true",
		New:  "return val{state: infra.Unknown}, true",
		Run:  "^TestRead_(YAMLShortForm|CDKSynth)", Pkg: "./internal/lint/infra/cloudformation"},
	{Name: "cfn-queue-name-loop-unnamed", What: "QueueName properties that refer to each other through !GetAtt are followed until the depth limit, and the refusal no longer says they loop",
		File: "internal/lint/infra/cloudformation/intrinsics.go",
		Old:  "\tt.names[id] = nil\n",
		New:  "\n",
		Run:  "^TestRead_RefusesHostileTemplatesCleanly$", Pkg: "./internal/lint/infra/cloudformation"},
	{Name: "infra-alias-budget-ignored", What: "the readers follow aliases without charging the alias budget, so a billion-laughs template expands until another limit stops it",
		File: "internal/lint/infra/yamldoc/yamldoc.go",
		Old:  "if !f.budget.Spend(target) {",
		New:  "if !f.budget.Spend(target) && false {",
		Run:  "^TestRead_RefusesHostile", Pkg: "./internal/lint/infra/cloudformation ./internal/lint/infra/krm"},
	{Name: "krm-resource-id-ignored", What: "a Config Connector object's spec.resourceID is ignored and metadata.name taken as the Pub/Sub id",
		File: "internal/lint/infra/krm/krm.go",
		Old:  `if e := yamldoc.Find(m.spec, "resourceID"); e != nil {`,
		New:  `if e := yamldoc.Find(m.spec, "resourceID"); e != nil && false {`,
		Run:  "^TestRead_ConfigConnectorPubSubWithReferencesResolvedInTheFile$", Pkg: "./internal/lint/infra/krm"},
}
