package conformance

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// ledger collects the cells of the transports' conformance tests in this
// test binary.
var ledger = NewLedger()

// emulators are started before the tests and stopped after them; each
// transport's test file appends its starter in an init function.
var emulators []func() (stop func(), err error)

// parallelCells is how many parallel tests of this package run at once
// unless -parallel says otherwise. The cells mostly wait on broker clocks
// (leases, ack deadlines, quiet windows), not on the CPU, so the default of
// one per CPU would leave the suite waiting in series (the suite must stay well inside CI's time).
const parallelCells = 16

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", fmt.Sprint(parallelCells)); err != nil {
			fmt.Fprintln(os.Stderr, "conformance: set -parallel:", err)
			os.Exit(1)
		}
	}
	var stops []func()
	for _, start := range emulators {
		stop, err := start()
		if err != nil {
			fmt.Fprintln(os.Stderr, "conformance: start emulator:", err)
			for _, s := range stops {
				s()
			}
			os.Exit(1)
		}
		stops = append(stops, stop)
	}
	code := m.Run()
	for _, s := range stops {
		s()
	}
	if sk := ledger.Skipped(); len(sk) > 0 {
		fmt.Fprintln(os.Stderr, "conformance: skipped cells prove nothing:", sk)
		code = 1
	}
	// A full run checks the committed ledger when every cell passed; asked
	// to update it (make conformance-ledger), it writes what it found, Fail
	// cells included, and the run still fails.
	full := flag.Lookup("test.run").Value.String() == "" && !testing.Short()
	if full && (code == 0 || os.Getenv("BRIGHTER_UPDATE_LEDGER") == "1") {
		if err := checkLedger(ledger.Render()); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkLedger compares the rendered ledger with docs/conformance.md, or
// writes it when BRIGHTER_UPDATE_LEDGER=1.
func checkLedger(rendered string) error {
	path := filepath.Join("..", "..", "docs", "conformance.md")
	committed, err := os.ReadFile(path)
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && os.Getenv("BRIGHTER_UPDATE_LEDGER") == "1") {
		return fmt.Errorf("read the committed ledger: %w", err)
	}
	rendered += MutantsSection(string(committed))
	if os.Getenv("BRIGHTER_UPDATE_LEDGER") == "1" {
		return os.WriteFile(path, []byte(rendered), 0o644)
	}
	if string(committed) != rendered {
		return fmt.Errorf("docs/conformance.md is not current: run `make conformance-ledger` and commit it")
	}
	return nil
}
