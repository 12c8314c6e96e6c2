// Package message holds the transport-neutral message model that every other
// package of brighter shares: Message, Header, Bag, MessageType,
// RejectionReason and the names of the five rejection-metadata keys that
// Brighter (the .NET library) writes into the bag of a routed message.
//
// It implements the data side of requirements R-18 (rejection metadata) and
// R-28 (the discriminator of a routed copy), and the header model of
// docs/wire-format.md#message-header.
//
// It is at the bottom of the dependency graph (cmd -> pump -> broker ->
// message).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
package message
