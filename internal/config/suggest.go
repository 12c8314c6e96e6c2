package config

import (
	"fmt"
	"strings"
)

// closest returns the entry of valid nearest to s (case-insensitive edit
// distance), or "" when none is near enough to be a likely typo.
func closest(s string, valid []string) string {
	best, bestD := "", -1
	ls := strings.ToLower(s)
	for _, v := range valid {
		dist := editDistance(ls, strings.ToLower(v))
		if bestD < 0 || dist < bestD {
			best, bestD = v, dist
		}
	}
	limit := max(2, len(s)/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// suggestion returns ` (did you mean "x"?)` for the closest valid value, or
// "".
func suggestion(s string, valid []string) string {
	if c := closest(s, valid); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		// Long strings are never a typo of a field name; skip the work.
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
