// Command stress runs the test suite several times beside a CPU hog and
// reports every failing test by name (the suite must be green
// every time, not when the machine happens to be quiet). `make test-stress`
// runs it; it is not part of `make test`.
//
//	go run ./internal/tools/stress -runs 5 -hog 2 -out bin/stress -- -race -count=1 -timeout 40m ./...
//
// Each run is `go test -json ARGS` (the arguments after --); its events
// (the test2json format, `go doc cmd/test2json`) are saved to
// OUT/run-N.json and read for failed tests, failed packages (a build
// failure or a timeout panic has no test name) and per-package times. The
// hog is -hog x runtime.NumCPU() goroutines that spin until the last run
// ends. The exit status is 1 when any run had a failure, 2 on bad usage.
//
// With -summarize FILE it starts nothing: it prints the per-package times
// and the slowest tests of a saved `go test -json` output (docs/testing.md
// is written from it).
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its arguments and streams; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 5, "how many times to run the suite")
	hog := fs.Float64("hog", 2, "spinning goroutines per CPU core beside the runs (0: no hog)")
	out := fs.String("out", "bin/stress", "directory for each run's go test -json output (run-N.json)")
	summarize := fs.String("summarize", "", "print per-package times and the slowest tests of this saved go test -json file, and exit")
	top := fs.Int("top", 20, "how many of the slowest tests -summarize lists")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *summarize != "" {
		f, err := os.Open(*summarize)
		if err != nil {
			fmt.Fprintf(stderr, "stress: %v\n", err)
			return 2
		}
		defer f.Close()
		r, err := readEvents(f)
		if err != nil {
			fmt.Fprintf(stderr, "stress: read %s: %v\n", *summarize, err)
			return 2
		}
		r.printTimes(stdout, *top)
		return 0
	}
	testArgs := fs.Args()
	if *runs < 1 || len(testArgs) == 0 {
		fmt.Fprintln(stderr, "usage: stress [-runs N] [-hog F] [-out DIR] -- GO_TEST_ARGS... (e.g. -- -race -count=1 ./...)")
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "stress: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	spinners := int(*hog * float64(runtime.NumCPU()))
	stopHog := startHog(spinners)
	defer stopHog()
	fmt.Fprintf(stdout, "stress: %d runs of go test -json %s beside %d spinning goroutines (%d cores)\n", *runs, strings.Join(testArgs, " "), spinners, runtime.NumCPU())

	type failure struct {
		name string
		runs []int
	}
	failures := map[string]*failure{}
	var order []string
	for i := 1; i <= *runs && ctx.Err() == nil; i++ {
		path := filepath.Join(*out, fmt.Sprintf("run-%d.json", i))
		began := time.Now()
		r, err := runOnce(ctx, path, testArgs, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "stress: run %d: %v\n", i, err)
			return 2
		}
		fmt.Fprintf(stdout, "run %d/%d: %d tests, %d failed, %s wall, load %s (%s)\n", i, *runs, r.tests, len(r.failed), time.Since(began).Round(time.Second), loadAverage(), path)
		for _, name := range r.failed {
			fmt.Fprintf(stdout, "  FAIL %s\n", name)
			if failures[name] == nil {
				failures[name] = &failure{name: name}
				order = append(order, name)
			}
			failures[name].runs = append(failures[name].runs, i)
		}
	}
	if len(order) == 0 {
		fmt.Fprintf(stdout, "stress: all %d runs green\n", *runs)
		return 0
	}
	fmt.Fprintf(stdout, "stress: %d tests failed:\n", len(order))
	for _, name := range order {
		fmt.Fprintf(stdout, "  %s (runs %v)\n", name, failures[name].runs)
	}
	return 1
}

// startHog starts n goroutines that spin until the returned function is
// called, with enough OS threads for all of them beside the runs'
// bookkeeping.
func startHog(n int) func() {
	if n <= 0 {
		return func() {}
	}
	runtime.GOMAXPROCS(n + 1)
	var done atomic.Bool
	for range n {
		go func() {
			x := uint64(1)
			for !done.Load() {
				for range 1 << 16 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			_ = x
		}()
	}
	return func() { done.Store(true) }
}

// runOnce runs go test -json args once, tees its events to path and
// returns what they say. A go test that fails is not an error here (its
// failures are in the result); an error is a run that could not start or
// whose output could not be saved.
func runOnce(ctx context.Context, path string, args []string, stderr io.Writer) (*result, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start go test: %w", err)
	}
	r, readErr := readEvents(io.TeeReader(pipe, f))
	waitErr := cmd.Wait()
	if readErr != nil {
		return nil, fmt.Errorf("read go test -json output: %w", readErr)
	}
	if _, ok := waitErr.(*exec.ExitError); waitErr != nil && !ok {
		return nil, fmt.Errorf("go test: %w", waitErr)
	}
	if waitErr != nil && len(r.failed) == 0 {
		// go test failed without a failed test or package event (a vet
		// or build error printed to stderr).
		r.failed = append(r.failed, "go test: "+waitErr.Error()+" (see its stderr above)")
	}
	return r, nil
}

// event is one line of go test -json output (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds
	Output  string
}

// result is what one go test -json output says.
type result struct {
	tests    int                      // tests (and subtests) that passed or failed
	failed   []string                 // "pkg TestName", or "pkg (package: ...)" for a package failure
	packages map[string]time.Duration // package -> elapsed
	slow     []timed                  // tests without subtests, and subtests, with their elapsed time
	lastOut  map[string]string        // package -> its last output line (a timeout panic names the test)
}

// timed is a test and how long it took.
type timed struct {
	name string
	d    time.Duration
}

// readEvents decodes go test -json events from r until its end. Lines that
// are not JSON (go test prints build errors as text) are skipped.
func readEvents(r io.Reader) (*result, error) {
	res := &result{packages: map[string]time.Duration{}, lastOut: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	failedTest := map[string]bool{} // package -> a test of it failed
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		d := time.Duration(ev.Elapsed * float64(time.Second))
		switch {
		case ev.Action == "output" && strings.Contains(ev.Output, "panic: test timed out"):
			res.lastOut[ev.Package] = strings.TrimSpace(ev.Output)
		case ev.Test != "" && (ev.Action == "pass" || ev.Action == "fail"):
			res.tests++
			res.slow = append(res.slow, timed{ev.Package + " " + ev.Test, d})
			if ev.Action == "fail" {
				res.failed = append(res.failed, ev.Package+" "+ev.Test)
				failedTest[ev.Package] = true
			}
		case ev.Test == "" && (ev.Action == "pass" || ev.Action == "fail"):
			res.packages[ev.Package] = d
			if ev.Action == "fail" && !failedTest[ev.Package] {
				why := "failed without a failed test: build error or crash"
				if s := res.lastOut[ev.Package]; s != "" {
					why = s
				}
				res.failed = append(res.failed, ev.Package+" (package: "+why+")")
			}
		}
	}
	res.failed = leaves(res.failed)
	names := make([]string, len(res.slow))
	for i, s := range res.slow {
		names[i] = s.name
	}
	keep := map[string]bool{}
	for _, n := range leaves(names) {
		keep[n] = true
	}
	res.slow = slices.DeleteFunc(res.slow, func(s timed) bool { return !keep[s.name] })
	return res, sc.Err()
}

// leaves drops from failed every test whose subtest failed too (a parent
// fails with its child; the child names the failure).
func leaves(failed []string) []string {
	var out []string
	for _, f := range failed {
		parent := false
		for _, g := range failed {
			if strings.HasPrefix(g, f+"/") {
				parent = true
				break
			}
		}
		if !parent {
			out = append(out, f)
		}
	}
	return out
}

// modulePrefix is the longest "a/b/" prefix every package path shares
// (the module path and its slash), trimmed from the tables.
func modulePrefix(pkgs []timed) string {
	if len(pkgs) == 0 {
		return ""
	}
	prefix := pkgs[0].name
	for _, p := range pkgs[1:] {
		for !strings.HasPrefix(p.name+"/", prefix) {
			i := strings.LastIndexByte(strings.TrimSuffix(prefix, "/"), '/')
			if i < 0 {
				return ""
			}
			prefix = prefix[:i+1]
		}
	}
	if !strings.HasSuffix(prefix, "/") {
		i := strings.LastIndexByte(prefix, '/')
		prefix = prefix[:i+1]
	}
	return prefix
}

// printTimes writes the per-package times, slowest first, and the top
// slowest tests (those without subtests, and subtests), as Markdown tables.
func (r *result) printTimes(w io.Writer, top int) {
	pkgs := make([]timed, 0, len(r.packages))
	var total time.Duration
	for p, d := range r.packages {
		pkgs = append(pkgs, timed{p, d})
		total += d
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].d > pkgs[j].d })
	trim := modulePrefix(pkgs)
	fmt.Fprintf(w, "| package | time |\n| --- | ---: |\n")
	for _, p := range pkgs {
		if p.d < time.Second/10 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s |\n", strings.TrimPrefix(p.name, trim), p.d.Round(100*time.Millisecond))
	}
	fmt.Fprintf(w, "| (sum of package times) | %s |\n\n", total.Round(time.Second))
	sort.Slice(r.slow, func(i, j int) bool { return r.slow[i].d > r.slow[j].d })
	fmt.Fprintf(w, "| test | time |\n| --- | ---: |\n")
	for i, s := range r.slow {
		if i == top {
			break
		}
		fmt.Fprintf(w, "| %s | %s |\n", strings.TrimPrefix(s.name, trim), s.d.Round(100*time.Millisecond))
	}
	fmt.Fprintf(w, "\n%d tests and subtests, %d failed\n", r.tests, len(r.failed))
	for _, f := range r.failed {
		fmt.Fprintf(w, "- FAIL %s\n", strings.TrimPrefix(f, trim))
	}
}

// loadAverage is the 1-minute load average from /proc/loadavg, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
