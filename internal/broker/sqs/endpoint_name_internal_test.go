package sqs

import (
	"strings"
	"testing"
)

// An endpoint named in an error (a refused credential, a look-up that got
// no answer) never carries its user-info or query values: a proxy's
// credentials in the configured endpoint or in AWS_ENDPOINT_URL stay out of
// logs and lint findings, while scheme, host and port still say where the
// calls went.
func TestEndpointNameRedactsCredentials(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_SQS", "")
	t.Setenv("AWS_ENDPOINT_URL", "http://envuser:envsecret@proxy.example:4566/?token=envtoken")
	for _, got := range []string{
		endpointName("SQS", "http://user:s3cret@proxy.example:4566/?sig=abc123", "connections.aws.endpoint", "us-east-1"),
		endpointName("SQS", "http://user:s3cret@proxy.example:4566/?sig=abc123", "", "us-east-1"),
		endpointName("SQS", "", "", "us-east-1"),
	} {
		for _, secret := range []string{"s3cret", "abc123", "envsecret", "envtoken"} {
			if strings.Contains(got, secret) {
				t.Errorf("endpointName = %q: shows %q", got, secret)
			}
		}
		if !strings.Contains(got, "proxy.example:4566") {
			t.Errorf("endpointName = %q: does not say where the calls went", got)
		}
	}
}
