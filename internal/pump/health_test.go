package pump

import (
	"testing"
	"time"
)

// TestChannelFailureBackoffGrowsToTheCapWithJitter: the pause
// after the n-th failure in a row is channelFailureDelay at first, then
// doubles (a random point in the upper half of the doubled value, never
// below the base) up to maxChannelFailureDelay.
func TestChannelFailureBackoffGrowsToTheCapWithJitter(t *testing.T) {
	base, limit := 100*time.Millisecond, 2*time.Second
	if d := backoff(base, limit, 1); d != base {
		t.Fatalf("first pause %s, want %s", d, base)
	}
	for n := 2; n <= 12; n++ {
		want := min(base<<(n-1), limit)
		seen := map[time.Duration]bool{}
		for range 50 {
			d := backoff(base, limit, n)
			if d < want/2 || d > want || d < base {
				t.Fatalf("pause after failure %d = %s, want within [%s, %s]", n, d, want/2, want)
			}
			seen[d] = true
		}
		// Jitter (without it the test once passed): replicas that
		// failed together must not all pause alike. 50 draws from tens of
		// millions of nanoseconds are all equal only without jitter.
		if len(seen) < 10 {
			t.Fatalf("pause after failure %d: %d distinct values in 50 draws, want jitter", n, len(seen))
		}
	}
	if d := backoff(0, limit, 5); d != 0 {
		t.Fatalf("zero base gave %s", d)
	}
}
