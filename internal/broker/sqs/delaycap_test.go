package sqs

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// A requeue delay past SQS's 12 h visibility timeout, or a fraction of a
// second short of it, is applied as 12 h (ChangeMessageVisibility 43200
// on the wire), and the pump's deferral event and log line carry the 12 h
// applied, not the delay the handler asked for, in both variants.
func TestRequeueDelayAtTheCapReportedAsApplied(t *testing.T) {
	for _, v := range pumptest.Variants {
		for _, asked := range []time.Duration{MaxRequeueDelay + time.Hour, MaxRequeueDelay - 500*time.Millisecond} {
			t.Run(fmt.Sprintf("%s/%s", v, asked), func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				var bodies []string
				fc, _ := faultyClients(t, func(op, body string) error {
					if op == "ChangeMessageVisibility" {
						mu.Lock()
						bodies = append(bodies, body)
						mu.Unlock()
					}
					return nil
				})
				c := testClients(t)
				q := uniq("delay-cap-" + string(v))
				k := setup(t, fc, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: 30 * time.Second})
				send(t, c, ProducerOptions{}, newMessage(q))
				pumptest.AppliedDelayReported(t, v, k, asked, MaxRequeueDelay)
				mu.Lock()
				defer mu.Unlock()
				if len(bodies) != 1 || !strings.Contains(bodies[0], `"VisibilityTimeout":43200`) {
					t.Errorf("ChangeMessageVisibility calls %q, want one with VisibilityTimeout 43200", bodies)
				}
			})
		}
	}
}
