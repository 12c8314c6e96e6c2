package sqs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/redact"
)

// Clients are the SQS and SNS API clients a transport uses.
type Clients struct {
	// SQS is the SQS client.
	SQS *sqs.Client
	// SNS is the SNS client.
	SNS *sns.Client

	// source names where the credentials came from, for the error of a
	// refused credential (set by CheckCredentials; "" until then).
	source atomic.Pointer[string]
}

// Connection is where NewClientsWith connects and how it names that in
// errors.
type Connection struct {
	// Region and Profile override the default chain's when not "".
	Region, Profile string
	// Endpoint, when not "", is the endpoint of both services (see
	// NewClients).
	Endpoint string
	// EndpointFrom names where Endpoint came from, for errors
	// ("connections.aws.endpoint in the subscriptions file", "the
	// --endpoint flag"); "" names nothing.
	EndpointFrom string
	// Calls, when not nil, counts every SQS and SNS call the clients send
	// (each attempt, a batch as one call; see broker.Call).
	Calls broker.CallCounter
	// CallDeadline, when more than 0, bounds every SQS and SNS operation,
	// its retries included, even under a caller's later deadline (lint
	// --live's short look-ups); 0 leaves a caller's deadline as it is and
	// gives an operation without one DefaultCallDeadline. The error of an
	// operation it cuts off names the endpoint and the deadline.
	CallDeadline time.Duration
	// Logger receives the AWS SDK's own log lines (the credential chain's
	// warnings, e.g. "falling back to IMDSv1") as records with the message
	// SDKLogMessage; nil drops them.
	Logger *slog.Logger
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
	return NewClientsWith(ctx, Connection{Region: region, Endpoint: endpoint, Profile: profile})
}

// NewClientsWith is NewClients from a Connection, whose EndpointFrom the
// errors of a call cut off by its deadline or refused credentials name.
func NewClientsWith(ctx context.Context, conn Connection) (*Clients, error) {
	var opts []func(*config.LoadOptions) error
	if conn.Region != "" {
		opts = append(opts, config.WithRegion(conn.Region))
	}
	if conn.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(conn.Profile))
	}
	// The SDK's default logger prints raw lines on stderr, past
	// --log-format json: its lines go through the command's logger.
	opts = append(opts, config.WithLogger(newSDKLogger(conn.Logger)))
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return newClients(cfg, conn.Endpoint, conn.EndpointFrom, conn.Calls, conn.CallDeadline), nil
}

// NewClientsFromConfig makes the clients from an aws.Config (tests use it to
// install static credentials or a fault-injecting HTTP client). endpoint is
// as for NewClients. cfg's HTTP client is wrapped so that the SDK cannot
// have a connection closed under a response (see bodyShield).
func NewClientsFromConfig(cfg aws.Config, endpoint string) *Clients {
	return newClients(cfg, endpoint, "", nil, 0)
}

// NewCountedClientsFromConfig is NewClientsFromConfig with every SQS and
// SNS call the clients send counted into calls (see Connection.Calls).
func NewCountedClientsFromConfig(cfg aws.Config, endpoint string, calls broker.CallCounter) *Clients {
	return newClients(cfg, endpoint, "", calls, 0)
}

func newClients(cfg aws.Config, endpoint, from string, calls broker.CallCounter, limit time.Duration) *Clients {
	cfg = shielded(cfg)
	c := &Clients{}
	c.SQS = sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.APIOptions = append(o.APIOptions, callDeadline(endpointName("SQS", endpoint, from, cfg.Region), c.credentialSource, limit))
		if calls != nil {
			o.APIOptions = append(o.APIOptions, countCalls(calls))
		}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	c.SNS = sns.NewFromConfig(cfg, func(o *sns.Options) {
		o.APIOptions = append(o.APIOptions, callDeadline(endpointName("SNS", endpoint, from, cfg.Region), c.credentialSource, limit))
		if calls != nil {
			o.APIOptions = append(o.APIOptions, countCalls(calls))
		}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return c
}

// credentialSource is what CheckCredentials found, "" before.
func (c *Clients) credentialSource() string {
	if s := c.source.Load(); s != nil {
		return *s
	}
	return ""
}

// ErrNoCredentials is wrapped by CheckCredentials when the AWS credential
// chain found no credentials (without it, consume would retry a
// broker it can never authenticate to, logging a channel failure eight times a second).
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
	name := sourceName(creds.Source, profile)
	c.source.Store(&name)
	return creds.Source, nil
}

// sourceName names an SDK credential source (aws.Credentials.Source) for
// an operator.
func sourceName(source, profile string) string {
	switch {
	case source == "EnvConfigCredentials":
		if os.Getenv("AWS_SESSION_TOKEN") != "" {
			return "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)"
		}
		return "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
	case strings.HasPrefix(source, "SharedConfigCredentials"):
		if profile != "" {
			return "the shared credentials file, profile " + strconv.Quote(profile)
		}
		return "the shared credentials file (" + strings.TrimPrefix(strings.TrimPrefix(source, "SharedConfigCredentials"), ": ") + ")"
	case source == "SSOProvider":
		return "AWS SSO (the shared config file)"
	case source == "ProcessProvider":
		return "credential_process (the shared config file)"
	case source == "WebIdentityCredentials":
		return "the web identity token (AWS_WEB_IDENTITY_TOKEN_FILE)"
	case source == "CredentialsEndpointProvider":
		return "the container role (AWS_CONTAINER_CREDENTIALS_*)"
	case source == "EC2RoleProvider":
		return "the EC2 instance role (IMDS)"
	case source == "AssumeRoleProvider":
		return "an assumed role (the shared config file)"
	case source == "":
		return "an unnamed credential provider"
	}
	return source
}

// EndpointName names the endpoint of service ("SQS" or "SNS") as this
// package's errors name it (user-info and query redacted): endpoint and
// where it came from (from, when not ""), else the SDK's environment
// override, else the AWS endpoint of region. lint --live names the broker
// it asked with it.
func EndpointName(service, endpoint, from, region string) string {
	return endpointName(service, endpoint, from, region)
}

// endpointName names a service's endpoint in errors (its user-info and
// query redacted: a proxy's credentials never reach a log or a finding): the configured one
// and where it came from (from, when not ""), else the SDK's environment
// override (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL), else the AWS
// endpoint of the region.
func endpointName(service, endpoint, from, region string) string {
	if endpoint != "" {
		if from != "" {
			return service + " at " + redact.URL(endpoint) + " (" + from + ")"
		}
		return service + " at " + redact.URL(endpoint)
	}
	for _, v := range []string{"AWS_ENDPOINT_URL_" + service, "AWS_ENDPOINT_URL"} {
		if e := os.Getenv(v); e != "" {
			return service + " at " + redact.URL(e) + " (" + v + ")"
		}
	}
	return service + " (the AWS endpoint for region " + region + ")"
}
