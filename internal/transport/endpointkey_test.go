package transport

import (
	"testing"

	"github.com/brightergo/brighter/internal/config"
)

// TestTargetEndpoint_TellsAnEmulatorFromProduction: the endpoint that keys
// a destination's retry history names the emulator (redacted) or the
// real service's region, so the same queue name on the two is two keys.
func TestTargetEndpoint_TellsAnEmulatorFromProduction(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	target := func(tr config.Transport, c config.Connections) *Target {
		return &Target{F: &config.File{Connections: c}, S: &config.Subscription{Transport: tr}}
	}
	for _, c := range []struct {
		name string
		t    *Target
		env  map[string]string
		want string
	}{
		{"sqs file endpoint, redacted", target(config.TransportSQS, config.Connections{AWS: config.AWSConnection{Endpoint: "http://user:pw@127.0.0.1:4566/?k=v"}}), nil, "http://REDACTED@127.0.0.1:4566/?k=REDACTED"},
		{"sqs AWS_ENDPOINT_URL", target(config.TransportSQS, config.Connections{}), map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_REGION": "us-east-1"}, "http://127.0.0.1:4566"},
		{"sqs real AWS by region", target(config.TransportSQS, config.Connections{}), map[string]string{"AWS_REGION": "eu-west-1"}, "aws:eu-west-1"},
		{"sqs file region wins", target(config.TransportSQS, config.Connections{AWS: config.AWSConnection{Region: "us-east-2"}}), map[string]string{"AWS_REGION": "eu-west-1"}, "aws:us-east-2"},
		{"gcp emulator env", target(config.TransportGCP, config.Connections{}), map[string]string{"PUBSUB_EMULATOR_HOST": "127.0.0.1:8085"}, "127.0.0.1:8085"},
		{"gcp real", target(config.TransportGCP, config.Connections{}), nil, "pubsub.googleapis.com"},
		{"rocketmq namespace", target(config.TransportRocketMQ, config.Connections{RocketMQ: config.RocketMQConnection{Endpoint: "127.0.0.1:8081", Namespace: "ns"}}), nil, "127.0.0.1:8081/ns"},
		{"memory", target(config.TransportMemory, config.Connections{}), nil, ""},
	} {
		if got := c.t.Endpoint(env(c.env)); got != c.want {
			t.Errorf("%s: Endpoint = %q, want %q", c.name, got, c.want)
		}
	}
}
