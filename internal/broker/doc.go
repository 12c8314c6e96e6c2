// Package broker defines what a transport is to the rest of brighter: the
// Consumer, Producer and ChannelMaker interfaces, the delivery-count rule every
// transport applies (requirements Group A, R-28), and the ONE rejection-routing
// implementation (Router) that every transport's Reject delegates to
// (R-15..R-19).
//
// Transports live in sub-packages (sqs, gcp, rocketmq, memory). This package
// imports only internal/message; it must never import internal/pump or a
// transport.
package broker
