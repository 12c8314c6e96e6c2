package rocketmq_test

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// A requeue delay past RocketMQ's longest invisible duration (12 h, the
// proxy's maxInvisibleTimeMills, which a broker refuses past) is applied
// as 12 h, and the pump's deferral event and log line carry the 12 h
// applied, not the delay the handler asked for, in both variants.
func TestRequeueDelayAtTheCapReportedAsApplied(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			e := newEnv(t, "cap")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "cap", ConsumerGroup: "cap-" + string(v), BufferSize: 1})
			e.send("cap", "cap-1")
			pumptest.AppliedDelayReported(t, v, c, limits.RocketMQ.MaxLease+time.Nanosecond, limits.RocketMQ.MaxLease)
		})
	}
}
