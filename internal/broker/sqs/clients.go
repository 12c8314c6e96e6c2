package sqs

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Clients are the SQS and SNS API clients a transport uses.
type Clients struct {
	// SQS is the SQS client.
	SQS *sqs.Client
	// SNS is the SNS client.
	SNS *sns.Client
}

// NewClients loads the normal AWS configuration (environment, shared config
// and credentials files, SSO, container and instance roles) and makes the
// SQS and SNS clients. region and profile override the chain's when not "".
// endpoint, when not "", is the endpoint of both services (the subscriptions
// file's override, e.g. http://127.0.0.1:4566 for fauxqs) and wins over
// AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_SNS, which the
// SDK honours otherwise. It returns an error when the configuration cannot
// be loaded (a named profile that does not exist, a malformed file).
func NewClients(ctx context.Context, region, endpoint, profile string) (*Clients, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return NewClientsFromConfig(cfg, endpoint), nil
}

// NewClientsFromConfig makes the clients from an aws.Config (tests use it to
// install static credentials or a fault-injecting HTTP client). endpoint is
// as for NewClients. cfg's HTTP client is wrapped so that the SDK cannot
// have a connection closed under a response (see bodyShield).
func NewClientsFromConfig(cfg aws.Config, endpoint string) *Clients {
	cfg = shielded(cfg)
	return &Clients{
		SQS: sqs.NewFromConfig(cfg, func(o *sqs.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}),
		SNS: sns.NewFromConfig(cfg, func(o *sns.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}),
	}
}
