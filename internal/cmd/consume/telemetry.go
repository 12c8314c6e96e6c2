package consume

import (
	"context"
	"log/slog"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/telemetry"
)

// Stable log texts of the OpenTelemetry wiring.
const (
	logTelemetryOn           = "opentelemetry export on"
	logTelemetryFlushFailed  = "opentelemetry flush at stop failed"
	telemetryShutdownTimeout = 5 * time.Second
)

// startTelemetry builds the OpenTelemetry tracing and metrics the standard
// OTEL_* environment asks for (off by default, OTEL_SDK_DISABLED
// honoured). It returns nil (off) and a no-op stop when nothing is asked;
// an exporter the environment names but that cannot be built is a usage
// error. stop flushes and shuts the exporters down.
func (o *Options) startTelemetry(ctx context.Context, logger *slog.Logger, subs []*config.Subscription) (tel *telemetry.Telemetry, stop func(), err error) {
	telemetry.RouteGlobalLogs(logger)
	p, err := telemetry.FromEnv(ctx, o.io.Getenv, o.global.Version().Version)
	if err != nil {
		return nil, nil, cmdutil.UsageErr(err)
	}
	if p == nil {
		return nil, func() {}, nil
	}
	ts := make([]telemetry.Subscription, 0, len(subs))
	for _, s := range subs {
		ts = append(ts, telemetrySubscription(s))
	}
	tel, err = telemetry.New(p.TracerProvider, p.MeterProvider, ts)
	if err != nil {
		_ = p.Shutdown(ctx)
		return nil, nil, cmdutil.FailureErr(err)
	}
	logger.Info(logTelemetryOn, "traces", p.Traces, "metrics", p.Metrics)
	return tel, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telemetryShutdownTimeout)
		defer cancel()
		if err := p.Shutdown(sctx); err != nil {
			logger.Warn(logTelemetryFlushFailed, "error", err)
		}
	}, nil
}

// telemetrySubscription names a subscription in the messaging
// conventions: the system, the destination read and the consumer group.
func telemetrySubscription(s *config.Subscription) telemetry.Subscription {
	ts := telemetry.Subscription{Name: s.Name, Destination: s.ChannelName, HandlerType: string(s.Handler.Type)}
	switch s.Transport {
	case config.TransportSQS:
		ts.System = "aws_sqs"
	case config.TransportGCP:
		// The topic is the destination; the subscription read is the group.
		ts.System, ts.Destination, ts.ConsumerGroup = "gcp_pubsub", s.RoutingKey, s.ChannelName
	case config.TransportRocketMQ:
		ts.System = "rocketmq"
		if s.RocketMQ != nil {
			ts.ConsumerGroup = s.RocketMQ.ConsumerGroup
		}
	default:
		ts.System = string(s.Transport)
	}
	return ts
}
