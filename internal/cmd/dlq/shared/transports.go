package shared

import (
	"github.com/brightergo/brighter/internal/transport"
)

// The transports' wiring lives in internal/transport: the verbs name its
// types (transport.Target, transport.Transport, transport.Channel) as they are.

// commandLinePath is transport.CommandLinePath.
const commandLinePath = transport.CommandLinePath

// urlOptions are the flags and environment a destination named by URL
// takes its connection from.
func (o *Options) urlOptions() transport.URLOptions {
	return transport.URLOptions{
		Endpoint: o.Endpoint, Region: o.Region, Profile: o.Profile, SNS: o.SNS, Group: o.Group,
		RocketMQEndpoint: o.RocketMQEndpoint, Env: o.Env,
	}
}
