package infratest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// Reader is one format's reader as its tests drive it: Read returns the
// resources of the file name holding data, or config errors with
// positions; Detect tells a file of the format from other files.
type Reader struct {
	Read   func(name string, data []byte) ([]infra.Resource, error)
	Detect func(data []byte) bool
}

// MaxHostileAlloc bounds what refusing one hostile file may allocate, in
// bytes: the bound of a subscriptions file, whose worst refusal (an alias
// expansion stopped by the alias budget) allocates 289 MB
// (docs/performance.md).
const MaxHostileAlloc = 300 << 20

// ReadCorpus reads the file name of the directory dir with r, failing the
// test when the file cannot be read, r.Detect does not take it for its
// format, or r.Read refuses it.
func ReadCorpus(t *testing.T, r Reader, dir, name string) []infra.Resource {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Detect(data) {
		t.Errorf("Detect(%s) = false, want true", name)
	}
	rs, err := r.Read(name, data)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return rs
}

// ErrorsOf returns the config.Errors of err (a lone *config.Error as one
// entry), failing the test when err is neither.
func ErrorsOf(t testing.TB, err error) config.Errors {
	t.Helper()
	var es config.Errors
	var e *config.Error
	switch {
	case errors.As(err, &es):
		return es
	case errors.As(err, &e):
		return config.Errors{e}
	}
	t.Fatalf("error %v (%T) is not config.Errors", err, err)
	return nil
}

// Allocated returns the bytes allocated on the heap while fn runs
// (runtime.MemStats.TotalAlloc's growth, so other goroutines' allocations
// count too).
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// RefusesHostile reads every file of the directory dir with r.Read and
// checks that each is refused with config errors whose text contains every
// string want gives for the file's name, allocating at most
// MaxHostileAlloc bytes. dir must hold exactly the files want names.
func RefusesHostile(t *testing.T, r Reader, dir string, want map[string][]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("hostile holds %d files (%v), the table %d: keep them in step", len(files), err, len(want))
	}
	for _, path := range files {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got error
		alloc := Allocated(func() { _, got = r.Read(name, data) })
		if got == nil {
			t.Errorf("%s: read without error", name)
			continue
		}
		ErrorsOf(t, got)
		for _, w := range want[name] {
			if !strings.Contains(got.Error(), w) {
				t.Errorf("%s:\n got %v\nwant %s", name, got, strings.Join(want[name], " ... "))
				break
			}
		}
		if alloc > MaxHostileAlloc {
			t.Errorf("%s: refusing it allocated %d bytes, over %d", name, alloc, MaxHostileAlloc)
		}
	}
}

// RefusesHuge reads each source of files (by a name for the test) as the
// file name with r.Read and checks that it is refused after allocating at
// most 1 MiB, with an error naming the file and containing "for a file
// brighter reads" and every string of want, and that r.Detect does not
// take it for its format.
func RefusesHuge(t *testing.T, r Reader, name string, files map[string]string, want ...string) {
	t.Helper()
	for what, src := range files {
		data := []byte(src)
		var err error
		if alloc := Allocated(func() { _, err = r.Read(name, data) }); alloc > 1<<20 {
			t.Errorf("%s: refusing it allocated %d bytes", what, alloc)
		}
		ok := err != nil && strings.Contains(err.Error(), name+":") && strings.Contains(err.Error(), "for a file brighter reads")
		for _, w := range want {
			ok = ok && strings.Contains(err.Error(), w)
		}
		if !ok {
			t.Errorf("%s: %v", what, err)
		}
		if r.Detect(data) {
			t.Errorf("%s: detected as the reader's format", what)
		}
	}
}

// Fuzz fuzzes r with the seeds already added to f: any input is read or
// refused with config errors, never a panic, and every resource read has a
// position in the file and an address.
func Fuzz(f *testing.F, r Reader) {
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := r.Read("f.yaml", data)
		r.Detect(data)
		if err != nil {
			ErrorsOf(t, err)
			return
		}
		for _, res := range rs {
			if !res.Pos.IsValid() || res.Pos.File != "f.yaml" || res.Address == "" {
				t.Fatalf("resource %+v without a position or address", res)
			}
		}
	})
}
