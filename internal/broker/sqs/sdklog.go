package sqs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// SDKLogMessage is the message text of every record the AWS SDK's own log
// lines become (the SDK's text is the record's sdk_message attribute), so
// that a log pipeline can match them.
const SDKLogMessage = "aws sdk log"

// sdkLogger routes the AWS SDK's log lines (aws.Config.Logger, e.g. the
// credential chain's "falling back to IMDSv1") into a command's slog
// logger, so that they follow --log-format and --log-level instead of
// being printed raw on stderr. The SDK's classification maps to the
// level: WARN to Warn, DEBUG to Debug, any other to Info.
type sdkLogger struct {
	log *slog.Logger
	ctx context.Context
}

// newSDKLogger is the SDK logger writing into log; a nil log drops the
// SDK's lines (never the SDK's default, which prints unformatted lines on
// stderr).
func newSDKLogger(log *slog.Logger) sdkLogger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return sdkLogger{log: log, ctx: context.Background()}
}

// Logf logs one SDK line at the level of its classification.
func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	l.log.Log(l.ctx, sdkLevel(c), SDKLogMessage, "sdk_message", fmt.Sprintf(format, v...))
}

// WithContext is the logger passing ctx (the SDK operation's) to the
// slog handler.
func (l sdkLogger) WithContext(ctx context.Context) logging.Logger {
	return sdkLogger{log: l.log, ctx: ctx}
}

// sdkLevel is the slog level of an SDK classification.
func sdkLevel(c logging.Classification) slog.Level {
	switch c {
	case logging.Warn:
		return slog.LevelWarn
	case logging.Debug:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
