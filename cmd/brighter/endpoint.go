package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

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
// emulator, a RocketMQ proxy; what says so for the message, such as "a
// Pub/Sub emulator endpoint is HOST:PORT (such as localhost:8085)"), as a
// usage error (exit 2) naming from and what is wrong, before any
// connection is tried: gRPC otherwise reported "too many colons in
// address" as an endpoint that "did not answer". list allows several
// HOST:PORT separated by ';' (the RocketMQ client's form).
func checkHostPort(from, what, endpoint string, list bool) error {
	parts := []string{endpoint}
	if list {
		parts = strings.Split(endpoint, ";")
	}
	for _, p := range parts {
		if err := hostPort(p); err != nil {
			return usageErr(fmt.Errorf("%s %s: %s: %w", from, redact.Quote(endpoint), what, err))
		}
	}
	return nil
}

// hostPort says what is wrong with s as HOST:PORT, nil when nothing is.
func hostPort(s string) error {
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		return fmt.Errorf("no scheme (%s://) is taken", scheme)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New(ae.Err)
		}
		return err
	}
	if host == "" || strings.ContainsAny(host, " \t") {
		return fmt.Errorf("host %q is not a host name or address", host)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}
