package sqs

import (
	"strconv"
	"testing"
)

// The pointers entryStrings hands out keep their values, also when more
// strings are kept than it made room for (the slice grows under them).
func TestEntryStringsPointersKeepTheirValues(t *testing.T) {
	e := newEntryStrings(2)
	var ps []*string
	for i := range 9 {
		ps = append(ps, e.ptr("v"+strconv.Itoa(i)))
	}
	for i, p := range ps {
		if want := "v" + strconv.Itoa(i); *p != want {
			t.Errorf("pointer %d reads %q, want %q", i, *p, want)
		}
	}
	if a := testing.AllocsPerRun(100, func() {
		e := newEntryStrings(10)
		for i := range 10 {
			_ = e.ptr(strconv.Itoa(i))
			_ = e.ptr("receipt")
		}
	}); a > 1 {
		t.Errorf("%.0f allocations for the 20 strings of a batch of 10, want 1", a)
	}
}
