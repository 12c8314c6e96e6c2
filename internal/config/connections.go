package config

import ()

var (
	connFields     = []string{"aws", "gcp", "rocketmq"}
	awsFields      = []string{"region", "endpoint", "profile"}
	gcpConnFields  = []string{"projectId", "emulatorHost"}
	rocketConnFlds = []string{"endpoint", "namespace", "accessKey", "secretKey"}
)

func (d *decoder) connections(e *entry) {
	ents, _ := d.mapEntries(e.val, e.path, connFields)
	c := &d.f.Connections
	for _, e := range ents {
		switch e.key {
		case "aws":
			for _, e := range d.entriesOf(e, awsFields) {
				switch e.key {
				case "region":
					d.str(e, &c.AWS.Region)
				case "endpoint":
					if d.str(e, &c.AWS.Endpoint) && c.AWS.Endpoint != "" {
						d.httpURL(e, c.AWS.Endpoint)
					}
				case "profile":
					d.str(e, &c.AWS.Profile)
				}
			}
		case "gcp":
			for _, e := range d.entriesOf(e, gcpConnFields) {
				switch e.key {
				case "projectId":
					d.str(e, &c.GCP.ProjectID)
				case "emulatorHost":
					if d.str(e, &c.GCP.EmulatorHost) && c.GCP.EmulatorHost != "" {
						d.hostPort(e, c.GCP.EmulatorHost, EmulatorHostShape, false)
					}
				}
			}
		case "rocketmq":
			for _, e := range d.entriesOf(e, rocketConnFlds) {
				switch e.key {
				case "endpoint":
					if d.str(e, &c.RocketMQ.Endpoint) && c.RocketMQ.Endpoint != "" {
						d.hostPort(e, c.RocketMQ.Endpoint, RocketMQEndpointShape, true)
					}
				case "namespace":
					d.str(e, &c.RocketMQ.Namespace)
				case "accessKey":
					d.str(e, &c.RocketMQ.AccessKey)
				case "secretKey":
					d.str(e, &c.RocketMQ.SecretKey)
				}
			}
		}
	}
}
