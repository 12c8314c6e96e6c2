package triage

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/transport"
)

// TestRefreshPeriod_RocketMQReadsAgainOnlyWhenAsked: every read of a
// RocketMQ destination is a delivery attempt of the reader group, so the
// console does not re-read it by itself unless --refresh is given; the
// other transports re-read every --refresh, its default included.
func TestRefreshPeriod_RocketMQReadsAgainOnlyWhenAsked(t *testing.T) {
	sqs := &transport.Target{URL: "sqs://orders-dlq"}
	rocket := &transport.Target{URL: "rocketmq://%DLQ%orders?group=ops", Group: "ops"}
	for _, c := range []struct {
		name    string
		t       *transport.Target
		refresh time.Duration
		set     bool
		want    time.Duration
	}{
		{"sqs default", sqs, defaultRefresh, false, defaultRefresh},
		{"sqs given", sqs, 30 * time.Second, true, 30 * time.Second},
		{"sqs off", sqs, 0, true, 0},
		{"rocketmq default", rocket, defaultRefresh, false, 0},
		{"rocketmq given", rocket, time.Minute, true, time.Minute},
	} {
		if got := refreshPeriod(c.t, c.refresh, c.set); got != c.want {
			t.Errorf("%s: refresh every %s, want %s", c.name, got, c.want)
		}
	}
}
