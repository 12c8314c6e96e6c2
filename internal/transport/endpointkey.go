package transport

import (
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// Endpoint names the broker endpoint t's destination lives on, redacted as
// logs are (URL user-info and query values): what tells a queue on an
// emulator from the production queue of the same name. SQS: the
// subscriptions file's endpoint, else AWS_ENDPOINT_URL_SQS or
// AWS_ENDPOINT_URL, else "aws:REGION" (the region from the file,
// AWS_REGION or AWS_DEFAULT_REGION; "aws" when none says). Pub/Sub: the
// emulator host (the file's, else PUBSUB_EMULATOR_HOST), else
// "pubsub.googleapis.com". RocketMQ: the proxy's host:port, with
// "/NAMESPACE" when one is set. Memory: "" (its file is in t.URL).
// getenv reads the command's environment ("" when unset).
func (t *Target) Endpoint(getenv func(string) string) string {
	if t == nil || t.F == nil || t.S == nil {
		return ""
	}
	c := t.F.Connections
	switch t.S.Transport {
	case config.TransportSQS:
		if c.AWS.Endpoint != "" {
			return redact.URL(c.AWS.Endpoint)
		}
		for _, v := range []string{"AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL"} {
			if e := getenv(v); e != "" {
				return redact.URL(e)
			}
		}
		region := c.AWS.Region
		for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
			if region == "" {
				region = getenv(v)
			}
		}
		if region == "" {
			return "aws"
		}
		return "aws:" + region
	case config.TransportGCP:
		if c.GCP.EmulatorHost != "" {
			return redact.URL(c.GCP.EmulatorHost)
		}
		if h := getenv("PUBSUB_EMULATOR_HOST"); h != "" {
			return redact.URL(h)
		}
		return "pubsub.googleapis.com"
	case config.TransportRocketMQ:
		e := redact.URL(c.RocketMQ.Endpoint)
		if c.RocketMQ.Namespace != "" {
			e += "/" + c.RocketMQ.Namespace
		}
		return e
	}
	return ""
}
