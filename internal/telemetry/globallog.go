package telemetry

import (
	"log/slog"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
)

// LogOTelError is the stable message of an OpenTelemetry SDK error (an
// exporter that cannot reach its collector, for example) logged through
// slog.
const LogOTelError = "opentelemetry error"

// RouteGlobalLogs sends the OpenTelemetry SDK's global error handler and
// internal logger through log: without it the SDK prints plain
// text lines ("2026/.. traces export: ...") on stderr whatever --log-format
// says, and a collector outage is invisible to JSON-log alerting. Errors are
// logged at Error with LogOTelError; the SDK's internal logger through
// logr's slog bridge, V(n) at slog level -n (V(0) Info, V(4) Debug: the
// SDK's own chatter shows only with --log-level debug).
// The OpenTelemetry handler and logger are process-wide by the SDK's
// design; consume calls this once, before the providers are built.
func RouteGlobalLogs(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Error(LogOTelError, "error", err)
	}))
	otel.SetLogger(logr.FromSlogHandler(log.Handler()))
}
