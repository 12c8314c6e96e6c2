package gcp

import (
	"fmt"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
)

// CheckLimits reports whether w is within Pub/Sub's limits
// (limits.PubSub): at most 100 attributes, keys of at most 256 bytes,
// values of at most 1,024 bytes, and data plus attributes of at most 10 MB.
// Google's emulator enforces none of the attribute limits, so brighter
// checks them itself before a publish, as real Pub/Sub would refuse it.
// The error names the first limit passed and wraps
// broker.ErrTooLarge (so a routed copy is tried once with its rejection
// message shortened, then released, R-19); nil when w fits.
func CheckLimits(w Wire) error {
	l := limits.PubSub
	if n := len(w.Attributes); n > l.MaxAttributes {
		return fmt.Errorf("%w: %d attributes, over Pub/Sub's %d", broker.ErrTooLarge, n, l.MaxAttributes)
	}
	size := len(w.Data)
	for k, v := range w.Attributes {
		if len(k) > l.MaxAttributeKeyBytes {
			return fmt.Errorf("%w: attribute key %.40q... is %d bytes, over Pub/Sub's %d", broker.ErrTooLarge, k, len(k), l.MaxAttributeKeyBytes)
		}
		if len(v) > l.MaxAttributeValueBytes {
			return fmt.Errorf("%w: attribute %q is %d bytes, over Pub/Sub's %d-byte attribute value limit", broker.ErrTooLarge, k, len(v), l.MaxAttributeValueBytes)
		}
		size += len(k) + len(v)
	}
	if size > l.MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes with attributes, over Pub/Sub's %d", broker.ErrTooLarge, size, l.MaxMessageBytes)
	}
	return nil
}
