package consume

// The stable log texts the process tests (package consume_test) read.
const (
	LogConsumeStopping    = logConsumeStopping
	LogConsumeStopped     = logConsumeStopped
	LogListenerStopFailed = logListenerStopFailed
	LogTelemetryOn        = logTelemetryOn
	LogConsumeQuitKey     = logConsumeQuitKey
	LogConsumeConnectQuit = logConsumeConnectQuit
)
