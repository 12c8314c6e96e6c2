package krm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/infratest"
)

const corpus = "../../../../testdata/infra/krm"

// format is this package's reader as infratest drives it.
var format = infratest.Reader{Read: Read, Detect: Detect}

func readCorpus(t *testing.T, name string) []infra.Resource {
	t.Helper()
	return infratest.ReadCorpus(t, format, corpus, name)
}

// check compares the flattened settings of each resource (by Address, in
// order) with want.
func check(t *testing.T, rs []infra.Resource, order []string, want map[string]map[string]string) {
	t.Helper()
	var got []string
	for _, r := range rs {
		got = append(got, r.Address)
		flat := infratest.Flatten(r)
		for field, v := range want[r.Address] {
			if flat[field] != v {
				t.Errorf("%s.%s = %q, want %q", r.Address, field, flat[field], v)
			}
		}
	}
	if strings.Join(got, " ") != strings.Join(order, " ") {
		t.Errorf("read %v, want %v in file order", got, order)
	}
}

func TestRead_ConfigConnectorPubSubWithReferencesResolvedInTheFile(t *testing.T) {
	rs := readCorpus(t, "pubsub.yaml")
	check(t, rs, []string{"PubSubTopic/shop/orders", "PubSubTopic/shop/orders-dead-letter", "PubSubSubscription/shop/orders-worker", "PubSubSubscription/shop/audit"},
		map[string]map[string]string{
			"PubSubTopic/shop/orders": {
				"Kind": "pubsub-topic", "Pos": "@2:1",
				"Name":    "known orders @5:3",
				"Project": "known shop-prod @8:5",
			},
			"PubSubTopic/shop/orders-dead-letter": {
				"Name":    "known orders-dlq @16:3", // spec.resourceID wins over metadata.name
				"Project": "unknown @10:1",          // left to the namespace's annotation
			},
			"PubSubSubscription/shop/orders-worker": {
				"Kind": "pubsub-subscription", "Pos": "@18:1",
				"Name":                           "known orders-worker @21:3",
				"Project":                        "known shop-prod @24:5",
				"Topic":                          "known orders @26:3",
				"AckDeadline":                    "known 1m0s @28:3",
				"Ordering":                       "known true @29:3",
				"ExactlyOnce":                    "known false @30:3",
				"MessageRetention":               "known 168h0m0s @31:3",
				"RetryPolicy":                    "declared",
				"RetryMinBackoff":                "known 10s @33:5",
				"RetryMaxBackoff":                "known 10m0s @34:5",
				"DeadLetter":                     "@35:3",
				"DeadLetter.Topic":               "known orders-dlq @36:5", // the resourceID of the topic the reference names
				"DeadLetter.MaxDeliveryAttempts": "known 5 @38:5",
				"ARN":                            "unset @18:1",
			},
			"PubSubSubscription/shop/audit": {
				"Name":                           "known audit-sub @46:3",
				"Topic":                          "known projects/shop-prod/topics/audit @47:3",
				"DeadLetter.Topic":               "known audit-dlq @50:5 ->PubSubTopic/platform/audit-dlq", // another namespace, declared in no file here: its name; a declaration elsewhere wins
				"DeadLetter.MaxDeliveryAttempts": "unset @49:3",                                            // the service default applies
				"AckDeadline":                    "unset @40:1",
				"RetryMinBackoff":                "unset @40:1",
				"RetryPolicy":                    "", // none declared
			},
		})
}

func TestRead_ACKQueuesWithStringAttributesAndJSONPolicies(t *testing.T) {
	rs := readCorpus(t, "sqs-ack.yaml")
	check(t, rs, []string{"Queue/shop/orders-dlq", "Queue/shop/orders"}, map[string]map[string]string{
		"Queue/shop/orders-dlq": {
			"Kind": "sqs-queue", "Pos": "@1:1",
			"Name":                       "known orders-dlq @7:3",
			"ARN":                        "unknown @1:1",
			"MessageRetention":           "known 336h0m0s @8:3",
			"MaxMessageSize":             "known 262144 @9:3",
			"RedriveAllow.Permission":    "known byQueue @10:3",
			"RedriveAllow.SourceARNs[0]": "known arn:aws:sqs:eu-west-1:123456789012:orders @10:3",
			"VisibilityTimeout":          "unset @1:1",
		},
		"Queue/shop/orders": {
			"Name":                    "known orders @19:3",
			"VisibilityTimeout":       "known 30s @20:3",
			"MessageRetention":        "known 96h0m0s @21:3",
			"MaxMessageSize":          "known 65536 @22:3",
			"FIFO":                    "known false @23:3",
			"Redrive":                 "@24:3",
			"Redrive.TargetARN":       "known arn:aws:sqs:eu-west-1:123456789012:orders-dlq @24:3",
			"Redrive.MaxReceiveCount": "known 5 @24:3",
		},
	})
}

func TestRead_KubectlListWithStatusARN(t *testing.T) {
	rs := readCorpus(t, "kubectl-list.yaml")
	check(t, rs, []string{"Queue/shop/payments"}, map[string]map[string]string{
		"Queue/shop/payments": {
			"Pos":                     "@3:3",
			"ARN":                     "known arn:aws:sqs:eu-west-1:123456789012:payments.fifo @17:7",
			"FIFO":                    "known true @11:5",
			"Name":                    "known payments.fifo @12:5",
			"VisibilityTimeout":       "known 2m0s @13:5",
			"Redrive.MaxReceiveCount": "known 3 @14:5", // a number in the JSON policy
		},
	})
}

func TestRead_RefusesBadFieldsWithPositions(t *testing.T) {
	head := "apiVersion: sqs.services.k8s.aws/v1alpha1\nkind: Queue\nmetadata:\n  name: q\nspec:\n"
	sub := "apiVersion: pubsub.cnrm.cloud.google.com/v1beta1\nkind: PubSubSubscription\nmetadata:\n  name: s\nspec:\n"
	cases := []struct{ name, src, want string }{
		{"not a number", head + "  visibilityTimeout: soon\n", `m.yaml:6:3: spec.visibilityTimeout: must be a whole number, got "soon"`},
		{"not a boolean", head + "  fifoQueue: \"yes please\"\n", `m.yaml:6:3: spec.fifoQueue: must be true or false`},
		{"policy not JSON", head + "  redrivePolicy: '{oops'\n", `m.yaml:6:3: spec.redrivePolicy: must be a JSON object`},
		{"policy count not a number", head + "  redrivePolicy: '{\"maxReceiveCount\": \"many\"}'\n", `m.yaml:6:3: spec.redrivePolicy.maxReceiveCount: must be a whole number, got many`},
		{"duration", sub + "  messageRetentionDuration: 7d\n", `m.yaml:6:3: spec.messageRetentionDuration: must be a duration in seconds such as "600s", got "7d"`},
		{"topic ref empty", sub + "  topicRef: {}\n", `m.yaml:6:3: spec.topicRef: a topic reference needs name or external`},
		{"spec a list", sub + "  ackDeadlineSeconds: [1]\n", `spec.ackDeadlineSeconds: must be a single value, got a list`},
		{"syntax", "apiVersion: v1\nkind: [\n", "YAML syntax error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read("m.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("Read accepted %q", c.src)
			}
			infratest.ErrorsOf(t, err)
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestDetect_TellsManifestsFromOtherFiles(t *testing.T) {
	cases := map[string]bool{
		"apiVersion: v1\nkind: ConfigMap\n":                           true,
		"---\nfoo: bar\n---\napiVersion: apps/v1\nkind: Deployment\n": true,
		"AWSTemplateFormatVersion: '2010-09-09'\nResources: {}\n":     false,
		"subscriptions:\n  - name: orders\n":                          false,
		"apiVersion: v1\n":                                            false,
		"apiVersion: v1\nkind: [\n":                                   false,
		`{"apiVersion": "v1", "kind": "List", "items": []}`:           true,
	}
	for src, want := range cases {
		if got := Detect([]byte(src)); got != want {
			t.Errorf("Detect(%q) = %v, want %v", src, got, want)
		}
	}
}

// hostileCorpus maps each file of testdata/infra/krm/hostile to the
// texts of the error it must be refused with, at a position, in bounded
// time and memory.
var hostileCorpus = map[string][]string{
	"billion-laughs.yaml": {"billion-laughs.yaml:15:11: spec: must be a mapping (key: value), got a list"},
	"merge-bomb.yaml":     {"merge-bomb.yaml:", "aliases and merge keys bring in more than 1000000 nodes here, the limit for a file (an alias bomb?)"},
	"deep-nesting.yaml":   {"deep-nesting.yaml:37:", "mappings and sequences nest deeper than the limit of 32 levels here"},
	"unknown-alias.yaml":  {"unknown-alias.yaml:5:7: spec: alias *nope refers to no anchor"},
}

func TestRead_RefusesHostileManifestsCleanly(t *testing.T) {
	infratest.RefusesHostile(t, format, filepath.Join(corpus, "hostile"), hostileCorpus)
}

func TestRead_RefusesHugeManifestsBeforeParsing(t *testing.T) {
	infratest.RefusesHuge(t, format, "big.yaml", map[string]string{
		"17 MiB":           "apiVersion: v1\nkind: List\n# " + strings.Repeat("x", config.MaxFileSize) + "\n",
		"3,000,002 tokens": "apiVersion: v1\nkind: List\nitems: [" + strings.Repeat("1,", config.MaxPreScan/2) + "1]\n",
	})
}

// FuzzRead: any input is read or refused with config errors, never a
// panic; every resource read has a position and an address.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*.yaml"))
	files = append(files, filepath.Join(corpus, "hostile", "unknown-alias.yaml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	infratest.Fuzz(f, format)
}

// Anchors, aliases and merge keys in a manifest are followed, explicit keys
// winning over merged ones, each value at the position it is written; an
// alias to an anchor of another document is refused, as YAML scopes anchors
// to their document.
func TestRead_MergeKeysAndAliasesAreFollowed(t *testing.T) {
	src := `apiVersion: v1
kind: List
items:
- apiVersion: sqs.services.k8s.aws/v1alpha1
  kind: Queue
  metadata:
    name: orders
  spec: &defaults
    queueName: orders
    visibilityTimeout: "30"
    fifoQueue: "false"
- apiVersion: sqs.services.k8s.aws/v1alpha1
  kind: Queue
  metadata:
    name: payments
  spec:
    <<: *defaults
    queueName: payments
`
	rs, err := Read("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	check(t, rs, []string{"Queue/orders", "Queue/payments"}, map[string]map[string]string{
		"Queue/orders":   {"Name": "known orders @9:5", "VisibilityTimeout": "known 30s @10:5"},
		"Queue/payments": {"Name": "known payments @18:5", "VisibilityTimeout": "known 30s @10:5", "FIFO": "known false @11:5"},
	})
	cross := "apiVersion: v1\nkind: ConfigMap\ndata: &d {a: b}\n---\napiVersion: sqs.services.k8s.aws/v1alpha1\nkind: Queue\nspec: *d\n"
	if _, err := Read("m.yaml", []byte(cross)); err == nil || !strings.Contains(err.Error(), "m.yaml:7:7: spec: alias *d refers to no anchor") {
		t.Errorf("an alias to another document's anchor: %v", err)
	}
}
