package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/brightergo/brighter/internal/redact"
)

// HostPortError says what is wrong with endpoint as HOST:PORT (a Pub/Sub
// emulator's connections.gcp.emulatorHost or dlq --endpoint, a RocketMQ
// proxy's connections.rocketmq.endpoint or --rocketmq-endpoint), nil when
// nothing is: no scheme, a host, a port from 1 to 65535. list allows
// several HOST:PORT separated by ';' (the RocketMQ client's form). gRPC
// would otherwise dial a malformed one and report "too many colons in
// address" as an endpoint that could not be reached.
func HostPortError(endpoint string, list bool) error {
	parts := []string{endpoint}
	if list {
		parts = strings.Split(endpoint, ";")
	}
	for _, p := range parts {
		if err := hostPort(p); err != nil {
			return err
		}
	}
	return nil
}

// hostPort is HostPortError for one HOST:PORT.
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

// hostPort checks that s, the value of e, is HOST:PORT (several separated
// by ';' when list), naming what (such as "a Pub/Sub emulator endpoint
// is HOST:PORT (such as localhost:8085)") and what is wrong. The value
// is quoted as written when it came from ${VAR} (writtenAt).
func (d *decoder) hostPort(e entry, s, what string, list bool) {
	if err := HostPortError(s, list); err != nil {
		d.errorf(d.resolve(e.val, e.path), e.path, "%s: %s: %v", redact.Quote(d.writtenAt(e.path, s)), what, err)
	}
}

// EmulatorHostShape and RocketMQEndpointShape say what a Pub/Sub emulator
// endpoint and a RocketMQ proxy endpoint look like, for errors about one
// (the subscriptions file's and dlq's flags alike).
const (
	EmulatorHostShape     = "a Pub/Sub emulator endpoint is HOST:PORT (such as localhost:8085)"
	RocketMQEndpointShape = "a RocketMQ proxy endpoint is HOST:PORT (such as localhost:8081), or several separated by ';'"
)
