package gcp

import (
	"testing"

	"github.com/brightergo/brighter/internal/message"
)

func ptr(n int) *int { return &n }

// TestDeliveryCount_AC33: attempts 1, 2, 3 present 0, 1, 2 on a fresh
// message; nil and 0 present the stamped count; never negative; a routed copy
// presents its stamped count.
func TestDeliveryCount_AC33(t *testing.T) {
	cases := []struct {
		name    string
		stamped int
		attempt *int
		routed  bool
		want    int
	}{
		{"first", 0, ptr(1), false, 0},
		{"second", 0, ptr(2), false, 1},
		{"third", 0, ptr(3), false, 2},
		{"nil attempt", 0, nil, false, 0},
		{"zero attempt", 0, ptr(0), false, 0},
		{"negative attempt", 0, ptr(-4), false, 0},
		{"negative stamp", -3, ptr(1), false, 0},
		{"stamped plus attempts", 2, ptr(3), false, 4},
		{"routed copy R-28", 3, ptr(5), true, 3},
		{"stamped, no policy", 3, nil, false, 3},
	}
	for _, tc := range cases {
		if got := DeliveryCount(tc.stamped, tc.attempt, tc.routed); got != tc.want {
			t.Errorf("%s: DeliveryCount(%d, %v, %v) = %d, want %d", tc.name, tc.stamped, tc.attempt, tc.routed, got, tc.want)
		}
	}
}

// TestPresent_RoutedCopyDiscriminator_R28: present reads the discriminator
// from the bag and records the broker attempt.
func TestPresent_RoutedCopyDiscriminator_R28(t *testing.T) {
	m := message.New("x", "t", message.MTEvent, nil)
	m.Header.HandledCount = 3
	routed := message.Stamp(m, "t.DLQ", message.Rejection{Reason: message.ReasonDeliveryError}, m.Header.Timestamp)
	present(routed, ptr(4))
	if routed.Header.HandledCount != 3 || routed.DeliveryAttempt != 4 {
		t.Errorf("routed copy presents %d (attempt %d), want 3 (4)", routed.Header.HandledCount, routed.DeliveryAttempt)
	}
	present(m, ptr(4))
	if m.Header.HandledCount != 6 {
		t.Errorf("source delivery presents %d, want 6", m.Header.HandledCount)
	}
}
