package rocketmq

import (
	"testing"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

// TestIsolatedInitialised: the workaround for rocketmq-clients
// v5.1.2's race between the first heartbeat and Send (isolated.go) finds the
// producer's isolated map in the client version go.mod names; when an
// upgrade removes or renames it this fails, and the workaround can go (or
// must follow).
func TestIsolatedInitialised(t *testing.T) {
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: "127.0.0.1:1", Credentials: &credentials.SessionCredentials{}})
	if err != nil {
		t.Fatal(err)
	}
	if !initIsolated(p) {
		t.Fatal("initIsolated found no isolated sync.Map in the client's producer: the v5.1.2 race workaround no longer applies")
	}
	if initIsolated(nil) || initIsolated(struct{}{}) || initIsolated(&struct{ isolated int }{}) {
		t.Fatal("initIsolated accepted a value with no isolated sync.Map")
	}
}
