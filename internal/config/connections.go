package config

// The top level and the connections block: how to reach each broker.

// topTable is the top level of the file. Both fields are read by
// decoder.file.
var topTable = []field[File]{
	{Field: Field{Name: "connections", Kind: KindBlock, Doc: "how to reach each broker, shared by every subscription of a transport"}},
	{Field: Field{Name: "subscriptions", Kind: KindBlock, Required: true, Doc: "the subscriptions, at least one; names are unique"}},
}

// connectionsTable is connections; each block is read by
// decoder.connections.
var connectionsTable = []field[Connections]{
	{Field: Field{Name: "aws", Kind: KindBlock, Doc: "SQS/SNS connection"}},
	{Field: Field{Name: "gcp", Kind: KindBlock, Doc: "Google Cloud Pub/Sub connection"}},
	{Field: Field{Name: "rocketmq", Kind: KindBlock, Doc: "RocketMQ 5 proxy connection"}},
}

var awsTable = []field[AWSConnection]{
	{Field: Field{Name: "region", Kind: KindText, Doc: "the AWS region; empty leaves AWS_REGION and the profile in charge"},
		at: func(c *AWSConnection) any { return &c.Region }},
	{Field: Field{Name: "endpoint", Kind: KindText, Doc: "an http or https URL (LocalStack, an SQS emulator); empty for AWS itself"},
		at: func(c *AWSConnection) any { return &c.Endpoint },
		after: func(d *decoder, e entry, c *AWSConnection) {
			if c.Endpoint != "" {
				d.httpURL(e, c.Endpoint)
			}
		}},
	{Field: Field{Name: "profile", Kind: KindText, Doc: "the AWS shared-config profile"},
		at: func(c *AWSConnection) any { return &c.Profile }},
}

var gcpConnTable = []field[GCPConnection]{
	{Field: Field{Name: "projectId", Kind: KindText, Doc: "the default project of every gcp subscription"},
		at: func(c *GCPConnection) any { return &c.ProjectID }},
	{Field: Field{Name: "emulatorHost", Kind: KindText, Doc: "host:port of a Pub/Sub emulator, no scheme; PUBSUB_EMULATOR_HOST is honoured when empty"},
		at: func(c *GCPConnection) any { return &c.EmulatorHost },
		after: func(d *decoder, e entry, c *GCPConnection) {
			if c.EmulatorHost != "" {
				d.hostPort(e, c.EmulatorHost, EmulatorHostShape, false)
			}
		}},
}

var rocketmqConnTable = []field[RocketMQConnection]{
	{Field: Field{Name: "endpoint", Kind: KindText, Doc: "the proxy's host:port, no scheme (several separated by ';'); required when a subscription uses transport rocketmq"},
		at: func(c *RocketMQConnection) any { return &c.Endpoint },
		after: func(d *decoder, e entry, c *RocketMQConnection) {
			if c.Endpoint != "" {
				d.hostPort(e, c.Endpoint, RocketMQEndpointShape, true)
			}
		}},
	{Field: Field{Name: "namespace", Kind: KindText, Doc: "the RocketMQ namespace"},
		at: func(c *RocketMQConnection) any { return &c.Namespace }},
	{Field: Field{Name: "accessKey", Kind: KindText, Doc: "the access key (a secret: redacted wherever it appears)"},
		at: func(c *RocketMQConnection) any { return &c.AccessKey }},
	{Field: Field{Name: "secretKey", Kind: KindText, Doc: "the secret key (a secret: redacted wherever it appears)"},
		at: func(c *RocketMQConnection) any { return &c.SecretKey }},
}

var (
	topFields      = names(topTable)
	connFields     = names(connectionsTable)
	awsFields      = names(awsTable)
	gcpConnFields  = names(gcpConnTable)
	rocketConnFlds = names(rocketmqConnTable)
)

func (d *decoder) connections(e *entry) {
	ents, _ := d.mapEntries(e.val, e.path, connFields)
	c := &d.f.Connections
	for _, e := range ents {
		switch e.key {
		case "aws":
			decodeFields(d, d.entriesOf(e, awsFields), &c.AWS, awsTable, nil)
		case "gcp":
			decodeFields(d, d.entriesOf(e, gcpConnFields), &c.GCP, gcpConnTable, nil)
		case "rocketmq":
			decodeFields(d, d.entriesOf(e, rocketConnFlds), &c.RocketMQ, rocketmqConnTable, nil)
		}
	}
}
