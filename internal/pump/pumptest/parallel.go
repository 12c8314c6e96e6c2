package pumptest

import (
	"flag"
	"fmt"
	"strconv"
)

// WaitBoundParallel sets the test binary's -test.parallel to n unless the
// command line set it. It is for a package whose parallel tests spend their
// time waiting on a broker (leases, ack deadlines, visibility timeouts), not
// on the CPU: the default, GOMAXPROCS, is 2 on a 2-core CI machine, where
// such a package took twice as long as it needed. Call it from
// TestMain before m.Run; it parses the command line. The error says the flag
// could not be set (a binary built without the testing flags).
func WaitBoundParallel(n int) error {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if explicit {
		return nil
	}
	if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
		return fmt.Errorf("pumptest: set -test.parallel to %d: %w", n, err)
	}
	return nil
}
