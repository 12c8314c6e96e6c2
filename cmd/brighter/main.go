// Command brighter runs message consumers on AWS SQS/SNS, Google Cloud
// Pub/Sub and RocketMQ 5 with a redelivery budget that runs down, routes
// rejected messages to dead-letter and invalid-message destinations with
// Brighter's rejection metadata, and gives operators tools around them
// (lint, dlq, watch). It speaks the wire format of Brighter, the .NET
// library.
//
// This package parses flags and wires packages together; the work is done in
// internal/... . Exit codes: 0 clean stop, 1 runtime failure, 2 usage or
// configuration error, 130 a dlq command interrupted by SIGINT or SIGTERM.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
package main

import (
	"context"
	"os"

	// CA roots compiled in, used only where the system has none (the
	// container image ships no certificate bundle): TLS to AWS and Google
	// works from an empty base image.
	_ "golang.org/x/crypto/x509roots/fallback"
)

func main() {
	os.Exit(run(context.Background(), systemIO(), os.Args[1:]))
}
