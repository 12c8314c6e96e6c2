package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/redact"
)

// secretsCorpusYAML puts a secret in each place of a subscriptions file
// one can be, some through ${VAR} and some written in the file: an http
// handler URL's path (the webhook token), user-info (a password that
// holds its user name) and query, a header, an exec handler's env (from
// ${VAR} and literal) and arguments (from ${VAR}), the AWS endpoint's
// user-info and the RocketMQ keys; and a ${VAR} in a name field, which is
// no secret.
const secretsCorpusYAML = `connections:
  aws:
    endpoint: http://aws-user-01:aws-user-01-Pa55w0rd@127.0.0.1:4566
  rocketmq:
    endpoint: 127.0.0.1:1
    accessKey: ${AK}
    secretKey: rocketmq-secret-key-1
subscriptions:
  - name: hook
    transport: sqs
    channelName: hook
    routingKey: hook
    deadLetterRoutingKey: ${DLQ_NAME}
    handler:
      type: http
      url: https://hook-user-7:hook-user-7-pw%40x@hooks.example/services/T0001/${HOOK_TOKEN}?sig=${SIG}
      headers: {Authorization: "Bearer ${BEARER}"}
  - name: prog
    transport: sqs
    channelName: prog
    routingKey: prog
    handler:
      type: exec
      command: /bin/true
      args: ["--token", "${ARG_TOKEN}"]
      env: {API_TOKEN: "${EXEC_TOKEN}", LITERAL_KEY: literal-env-secret-1}
`

// secretsCorpusEnv are the ${VAR} values of secretsCorpusYAML.
var secretsCorpusEnv = []string{
	"AK", "rocketmq-access-key-1",
	"HOOK_TOKEN", "XyZhookTokenXyZhookToken",
	"SIG", "sig-value-S3CRET-1",
	"BEARER", "bearer-S3CRET-1",
	"EXEC_TOKEN", "exec-env-S3CRET-1",
	"ARG_TOKEN", "exec-arg-S3CRET-1",
}

// TestSecretsCorpus_EveryConfiguredSecretIsMasked: a Redactor given
// File.Secrets, in any order, masks every secret of the file wherever it
// appears: in the URL as written, echoed alone, in an exec handler's
// stderr (a program that prints its environment), and a password that
// holds its user name leaves no tail; a ${VAR} that names a destination
// stays visible.
func TestSecretsCorpus_EveryConfiguredSecretIsMasked(t *testing.T) {
	const dlqName = "dlq-name-from-env-1" // a name, shown in every log line
	f := mustParse(t, "corpus.yaml", secretsCorpusYAML, noEnv(append([]string{"DLQ_NAME", dlqName}, secretsCorpusEnv...)...))
	all := map[string]string{ // what must not survive -> where it is
		"aws-user-01-Pa55w0rd":     "connections.aws.endpoint password (holds the user name)",
		"hook-user-7-pw@x":         "http handler URL password, decoded",
		"hook-user-7-pw%40x":       "http handler URL password, as written",
		"XyZhookTokenXyZhookToken": "http handler URL path token",
		"literal-env-secret-1":     "exec handler env, written in the file",
	}
	for i := 1; i < len(secretsCorpusEnv); i += 2 {
		all[secretsCorpusEnv[i]] = "${" + secretsCorpusEnv[i-1] + "}"
	}
	secrets := f.Secrets()
	for _, order := range []string{"as given", "reversed", "shortest first"} {
		s := slices.Clone(secrets)
		switch order {
		case "reversed":
			slices.Reverse(s)
		case "shortest first":
			slices.SortStableFunc(s, func(a, b string) int { return len(a) - len(b) })
		}
		var r redact.Redactor
		for _, v := range s { // one at a time, in this order
			r.Add(v)
		}
		var text strings.Builder
		for v := range all {
			text.WriteString("echo " + v + "\nAPI_TOKEN=" + v + "\n")
		}
		text.WriteString("POST " + f.Subscriptions[0].Handler.URL + " refused\n")
		text.WriteString("endpoint " + f.Connections.AWS.Endpoint + "\n")
		got := r.String(text.String())
		if strings.Contains(got, "Pa55w0rd") || strings.Contains(got, "pw%40x") || strings.Contains(got, "pw@x") {
			t.Errorf("%s: the tail of a password that holds its user name survived:\n%s", order, got)
		}
		for v, where := range all {
			if strings.Contains(got, v) {
				t.Errorf("%s: %s (%q) survived:\n%s", order, where, v, got)
			}
		}
		if r.String("rejected to "+dlqName) != "rejected to "+dlqName {
			t.Errorf("%s: a ${VAR} name (deadLetterRoutingKey) is masked", order)
		}
		if !strings.Contains(got, "POST https://REDACTED@hooks.example/REDACTED?sig=REDACTED refused") {
			t.Errorf("%s: the handler URL is not shown with scheme and host kept:\n%s", order, got)
		}
	}
}
