package main

// extraSets lists the mutant sets kept in their own files (set_<area>.go),
// each a []mutant; catalogue appends them to the conformance set. Add one
// line per new file.
func extraSets() [][]mutant {
	return [][]mutant{
		staleMutants,
		settleMutants,
		securityMutants,
		exhaustedMutants,
		rejectionRetryMutants,
		orderingMutants,
		limitsMutants,
		layerMutants,
		editMutants,
		dlqMutants,
		suiteMutants,
		editHeadersMutants,
		archiveMutants,
		urlQueryMutants,
		endpointMutants,
		refusalMutants,
		replayJSONMutants,
		docsMutants,
		exportMutants,
		stopMutants,
		lintBudgetMutants,
		leaseClockMutants,
		pullHealthMutants,
		fieldsMutants,
		redactMutants,
		keysMutants,
		lintScaleMutants,
		dlqSafeMutants,
		consoleMutants,
		evidenceMutants,
		triageConsoleMutants,
		lintInfraMutants,
		infraReaderMutants,
		settleBatchMutants,
		dlqBatchMutants,
	}
}
