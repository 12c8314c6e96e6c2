package dlq

// The helpers of this package's own tests that the in-process CLI tests
// (package dlq_test) use too.
var (
	CrashQueue   = crashQueue
	CrashPeekIDs = crashPeekIDs
)
