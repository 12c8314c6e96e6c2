package main

// failurePathMutants break failure paths that had a test and no mutant:
// consume's exit 1 when a channel's close fails (a memory channel that
// cannot write memory.output at stop), a SIGHUP drained as a SIGTERM when
// consume was not started under nohup and left ignored when it was,
// lint's memory-output-unwritable, and what an SQS receive from a deleted
// queue says to do. No conformance
// row reaches them: consume's, lint's and the SQS consumer's own tests
// kill them.
var failurePathMutants = []mutant{
	{Name: "consume-close-failure-exit-0", What: "consume drops the error of a channel close that fails at stop: a memory channel that cannot write memory.output loses the messages it held, and consume logs 'consume stopped' and exits 0",
		File: "internal/cmd/consume/consume.go",
		Old:  "\tif err := errors.Join(append(errs, closeChannels())...); err != nil {\n",
		New:  "\t_ = closeChannels()\n\tif err := errors.Join(errs...); err != nil {\n",
		Run:  "^TestConsumeMemoryOutput_WriteFailureAtStopFails$", Pkg: "./internal/cmd/consume"},
	{Name: "consume-sighup-not-a-stop", What: "consume does not take SIGHUP (the terminal closed, an ssh session dropped) as a stop request: it dies of the signal at once, exit 129, with no drain and no log line, leaving exec handlers' process groups running",
		File: "internal/cmd/cmdutil/signals.go",
		Old:  "\tif !signal.Ignored(syscall.SIGHUP) {\n",
		New:  "\tif false && !signal.Ignored(syscall.SIGHUP) {\n",
		Run:  "^TestConsumeSIGHUP_DrainsAsSIGTERM$", Pkg: "./internal/cmd/consume"},
	{Name: "consume-sighup-under-nohup-stops", What: "consume subscribes to SIGHUP though it was started with SIGHUP ignored (nohup): a hangup undoes nohup and stops it",
		File: "internal/cmd/cmdutil/signals.go",
		Old:  "\tif !signal.Ignored(syscall.SIGHUP) {\n",
		New:  "\tif true {\n",
		Run:  "^TestConsumeSIGHUP_IgnoredUnderNohup$", Pkg: "./internal/cmd/consume"},
	{Name: "lint-local-output-unchecked", What: "lint does not check a memory transport's output file (memory-output-unwritable): a memory.output consume cannot write passes lint and consume refuses it at start-up (exit 2)",
		File: "internal/lint/local/local.go",
		Old:  "\t\t\tif err := memory.CheckOutput(s.Memory.Output); err != nil {\n",
		New:  "\t\t\tif err := memory.CheckOutput(s.Memory.Output); err != nil && false {\n",
		Run:  "^TestCheck_MemoryOutputConsumeCannotWrite$", Pkg: "./internal/lint/local"},
	{Name: "sqs-deleted-queue-unsaid", What: "a receive from an SQS queue deleted while consuming fails with SQS's QueueDoesNotExist alone, not saying what to do (recreate the queue, or restart consume with makeChannels: create)",
		File: "internal/broker/sqs/consumer.go",
		Old:  "\t\treturn fmt.Errorf(\"%w: %s\", err, QueueGoneFix)\n",
		New:  "\t\treturn err\n",
		Run:  "^TestReceiveFromADeletedQueueSaysWhatToDo$", Pkg: "./internal/broker/sqs"},
}
