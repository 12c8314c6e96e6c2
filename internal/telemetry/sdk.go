package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// The standard environment variables FromEnv reads to decide.
const (
	EnvSDKDisabled           = "OTEL_SDK_DISABLED"
	EnvTracesExporter        = "OTEL_TRACES_EXPORTER"
	EnvMetricsExporter       = "OTEL_METRICS_EXPORTER"
	EnvOTLPEndpoint          = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint    = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvOTLPMetricsEndpoint   = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	DefaultServiceName       = "brighter"
	exporterNone             = "none"
	sdkDisabledValueTrueText = "true"
)

// Providers are the SDK providers consume exports through. A nil
// *Providers is off.
type Providers struct {
	// TracerProvider and MeterProvider are the SDK's, or no-op ones for a
	// signal that is off.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Traces and Metrics say which signals export.
	Traces, Metrics bool
	shutdown        []func(context.Context) error
}

// Shutdown flushes and stops the exporters (within ctx); safe on nil.
func (p *Providers) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, f := range p.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// asks reports whether the environment asks for a signal: its exporter
// variable names one (not "none"), or an OTLP endpoint is set for it and
// its exporter variable does not say "none".
func asks(getenv func(string) (string, bool), exporterVar, signalEndpoint string) bool {
	exp, set := getenv(exporterVar)
	exp = strings.TrimSpace(strings.ToLower(exp))
	if set && exp != "" {
		return exp != exporterNone
	}
	for _, v := range []string{EnvOTLPEndpoint, signalEndpoint} {
		if s, ok := getenv(v); ok && strings.TrimSpace(s) != "" {
			return true
		}
	}
	return false
}

// FromEnv builds the SDK providers the standard OTEL_* environment asks
// for, read through getenv: traces when OTEL_TRACES_EXPORTER names an
// exporter (otlp, console) or an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); metrics
// likewise with OTEL_METRICS_EXPORTER and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT.
// The exporters themselves come from the contrib autoexport package, which
// reads the rest of the OTEL_* variables from the process environment
// (OTEL_EXPORTER_OTLP_PROTOCOL grpc or http/protobuf, headers, timeouts).
// The resource is service.name "brighter" and service.version version,
// overridden by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
//
// It returns nil, nil when nothing is asked for or OTEL_SDK_DISABLED is
// true: telemetry is off by default. An error means an exporter could not
// be built from the environment.
func FromEnv(ctx context.Context, getenv func(string) (string, bool), version string) (*Providers, error) {
	if v, _ := getenv(EnvSDKDisabled); strings.EqualFold(strings.TrimSpace(v), sdkDisabledValueTrueText) {
		return nil, nil
	}
	traces := asks(getenv, EnvTracesExporter, EnvOTLPTracesEndpoint)
	metrics := asks(getenv, EnvMetricsExporter, EnvOTLPMetricsEndpoint)
	if !traces && !metrics {
		return nil, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("opentelemetry resource: %w", err)
	}
	p := &Providers{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(), Traces: traces, Metrics: metrics}
	if traces {
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return nil, fmt.Errorf("opentelemetry traces exporter (%s): %w", EnvTracesExporter, err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		p.TracerProvider = tp
		p.shutdown = append(p.shutdown, tp.Shutdown)
	}
	if metrics {
		r, err := autoexport.NewMetricReader(ctx)
		if err != nil {
			_ = p.Shutdown(ctx)
			return nil, fmt.Errorf("opentelemetry metrics exporter (%s): %w", EnvMetricsExporter, err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithResource(res))
		p.MeterProvider = mp
		p.shutdown = append(p.shutdown, mp.Shutdown)
	}
	return p, nil
}
