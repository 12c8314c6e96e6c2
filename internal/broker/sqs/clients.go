package sqs

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
			o.APIOptions = append(o.APIOptions, callDeadline(endpointName("SQS", endpoint, cfg.Region)))
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}),
		SNS: sns.NewFromConfig(cfg, func(o *sns.Options) {
			o.APIOptions = append(o.APIOptions, callDeadline(endpointName("SNS", endpoint, cfg.Region)))
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}),
	}
}

// ErrNoCredentials is wrapped by CheckCredentials when the AWS credential
// chain found no credentials (issue 13: consume retried a broker it could
// never authenticate to, logging a channel failure eight times a second).
var ErrNoCredentials = errors.New("no AWS credentials found")

// credentialSources names what the default credential chain tries, in its
// order, for the error of a chain that found nothing.
const credentialSources = "the environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE), " +
	"the shared config and credentials files (AWS_PROFILE, AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE; SSO, credential_process), " +
	"the container role (AWS_CONTAINER_CREDENTIALS_*) and the EC2 instance role (IMDS)"

// CheckCredentials retrieves the clients' credentials once, before any
// broker call, so that a consumer with none fails at start-up with one
// error naming the sources tried (wrapping ErrNoCredentials) instead of
// failing every receive. It returns the source the credentials came from
// (the SDK's Credentials.Source, e.g. "EnvConfigCredentials") on success.
// profile is the subscriptions file's profile ("" for the default chain).
func (c *Clients) CheckCredentials(ctx context.Context, profile string) (string, error) {
	p := c.SQS.Options().Credentials
	if p == nil {
		return "", fmt.Errorf("%w: no credential provider configured", ErrNoCredentials)
	}
	creds, err := p.Retrieve(ctx)
	if err != nil {
		tried := credentialSources
		if profile != "" {
			tried = "the shared config profile " + strconv.Quote(profile)
		}
		return "", fmt.Errorf("%w: tried %s: %w", ErrNoCredentials, tried, err)
	}
	return creds.Source, nil
}

// endpointName names a service's endpoint in errors: the configured one, or
// the AWS endpoint of the region (as the SDK resolves it, environment
// overrides included).
func endpointName(service, endpoint, region string) string {
	if endpoint != "" {
		return service + " at " + endpoint
	}
	return service + " (the AWS endpoint for region " + region + ")"
}
