package gcp

import (
	"errors"
	"strings"
	"testing"
	"time"
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
