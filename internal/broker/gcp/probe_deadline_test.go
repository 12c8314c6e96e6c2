package gcp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestBlackHoledProbeEndsAtItsTimeout: the start-up probe of a Pub/Sub
// endpoint that accepts the call and never answers (GetTopic held by the
// gRPC interceptor) reaches the wire with the probe's own timeout as its
// deadline, within the caller's longer one, and gives up at it with
// ErrUnreachable naming the timeout: a command does not wait out a distant
// deadline (the client's 60 s) before saying the endpoint did not answer.
func TestBlackHoledProbeEndsAtItsTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	e := newEnv(t)
	hold := e.faults.HoldCalls("GetTopic")
	defer e.faults.ReleaseCalls("GetTopic")
	start := time.Now()
	err := Probe(ctxT(t, 20*time.Second), e.client, e.project, timeout)
	took := time.Since(start)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "within 2s") {
		t.Errorf("Probe of a black-holed endpoint = %v, want ErrUnreachable within 2s", err)
	}
	if took > timeout+time.Second {
		t.Errorf("Probe of a black-holed endpoint took %s, want about its %s timeout", took.Round(time.Millisecond), timeout)
	}
	left := hold.Deadlines()
	if len(left) == 0 || left[0] <= 0 || left[0] > timeout || left[0] < timeout-time.Second {
		t.Errorf("GetTopic arrived with %v left of its deadline, want about %s", left, timeout)
	}
}

// TestProbeOfARefusingEndpointSaysRefused: the start-up probe of a Pub/Sub
// endpoint where nothing listens (127.0.0.1:1 refuses every connection)
// fails at once with ErrRefused, never as an endpoint that "did not
// answer" within the probe's timeout.
func TestProbeOfARefusingEndpointSaysRefused(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, 20*time.Second)
	c, err := Connect(ctx, "refused", option.WithEndpoint("127.0.0.1:1"), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())), option.WithTelemetryDisabled())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	start := time.Now()
	err = Probe(ctx, c, "refused", 5*time.Second)
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrUnreachable) {
		t.Errorf("Probe of a refusing endpoint = %v, want ErrRefused", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Probe of a refusing endpoint took %s, want at once", took.Round(time.Millisecond))
	}
}
