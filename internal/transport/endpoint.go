package transport

import (
	"fmt"
	"net/url"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// checkHTTPEndpoint refuses an SQS/SNS endpoint that is not an absolute
// http or https URL with a host (http://localhost:4566), as a usage error
// (exit 2) naming from (the flag or variable it came from) and what is
// wrong, before any connection is tried: the SDK otherwise said "Failed to
// parse uri" or "unsupported protocol scheme" after its retries.
func checkHTTPEndpoint(from, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErr(fmt.Errorf("%s %s: an SQS endpoint is an http or https URL (such as http://localhost:4566)",
			from, redact.Quote(redact.URL(endpoint))))
	}
	return nil
}

// checkHostPort refuses an endpoint that is not HOST:PORT (a Pub/Sub
// emulator, a RocketMQ proxy: config.HostPortError; shape says what one
// looks like, config.EmulatorHostShape or config.RocketMQEndpointShape),
// as a usage error (exit 2) naming from and what is wrong, before any
// connection is tried: gRPC otherwise reported "too many colons in
// address" as an endpoint that "did not answer". list allows several
// HOST:PORT separated by ';' (the RocketMQ client's form).
func checkHostPort(from, shape, endpoint string, list bool) error {
	if err := config.HostPortError(endpoint, list); err != nil {
		return usageErr(fmt.Errorf("%s %s: %s: %w", from, redact.Quote(endpoint), shape, err))
	}
	return nil
}
