// Command brighter runs message consumers on AWS SQS/SNS, Google Cloud
// Pub/Sub and RocketMQ 5 with a redelivery budget that runs down, routes
// rejected messages to dead-letter and invalid-message destinations with
// Brighter's rejection metadata, and gives operators tools around them
// (lint, dlq, watch). It speaks the wire format of Brighter, the .NET
// library.
//
// This package only wires: it builds the factory (internal/cmd/factory)
// on the process's streams and the -ldflags version, runs the root
// command (internal/cmd/root) and exits with its code. Each command is a
// package of internal/cmd (ARCHITECTURE.md, "Adding a command"). Exit
// codes: 0 clean stop, 1 runtime failure, 2 usage or configuration error,
// 130 a dlq command interrupted by SIGINT or SIGTERM, 141 a command whose
// stdout's reader went away (SIGPIPE is handled: the write fails with
// EPIPE and the command stops as at an interruption).
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

	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/cmd/root"
)

// make build, make image and release builds set these with -ldflags, for
// example
//
//	go build -ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.commit=$(git rev-parse HEAD)" ./cmd/brighter
//
// Empty values are taken from the build info the Go toolchain embeds: the
// module version of `go install github.com/brightergo/brighter/cmd/brighter@v1.2.3`,
// and the pseudo-version, VCS revision, time and modified flag of a `go
// build` from a checkout with VCS stamping on (docs/commands/version.md).
var (
	version = ""
	commit  = ""
)

func main() {
	f := factory.New(iostreams.System(), version, commit)
	os.Exit(root.Run(context.Background(), f, os.Args[1:]))
}
