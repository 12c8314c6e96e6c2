package gcp

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// A requeue delay past Pub/Sub's 600 s ack deadline is applied as 600 s
// (pull: ModifyAckDeadline 600; stream: held 600 s before its Nack), and
// the pump's deferral event and log line carry the 600 s applied, not the
// delay the handler asked for, in both variants.
func TestRequeueDelayAtTheCapReportedAsApplied(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		for _, v := range pumptest.Variants {
			for _, asked := range []time.Duration{maxAckDeadline + time.Nanosecond, time.Hour} {
				t.Run(string(v)+"/"+asked.String(), func(t *testing.T) {
					sub := "cap-" + string(v) + "-" + asked.String()
					e.channels(t, ChannelOptions{Topic: sub, Subscription: sub, RequeueCount: -1})
					c := e.consumer(t, md, ConsumerOptions{Subscription: sub, BufferSize: 1})
					e.send(t, sub, newMsg("cap-1"))
					pumptest.AppliedDelayReported(t, v, c, asked, maxAckDeadline)
				})
			}
		}
	})
}
