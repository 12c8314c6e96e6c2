package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
)

// TestNotSent_MarksErrorKeepingItsTextAndChain: NotSent marks an error with
// ErrNotSent and keeps its text and what it wraps; nil stays nil, and an
// unmarked error is not taken for one.
func TestNotSent_MarksErrorKeepingItsTextAndChain(t *testing.T) {
	if broker.NotSent(nil) != nil {
		t.Fatal("NotSent(nil) is not nil")
	}
	inner := fmt.Errorf("queue orders: %w", context.Canceled)
	err := fmt.Errorf("wrapped: %w", broker.NotSent(inner))
	if !errors.Is(err, broker.ErrNotSent) || !errors.Is(err, context.Canceled) {
		t.Errorf("%v: want both ErrNotSent and context.Canceled in the chain", err)
	}
	if err.Error() != "wrapped: queue orders: context canceled" {
		t.Errorf("text %q: NotSent changed it", err.Error())
	}
	if errors.Is(inner, broker.ErrNotSent) {
		t.Error("an unmarked error is taken for ErrNotSent")
	}
}
