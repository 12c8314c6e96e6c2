# brighter — build, test, lint and benchmark.
# `make test` is the README's test command and what .ci/run calls: it installs
# the emulators (npm packages; Google's Pub/Sub emulator with apt-get when
# missing), then runs go vet, staticcheck and every test layer with -race (the
# Go tests start fauxqs, Google's Pub/Sub emulator and the RocketMQ test
# broker themselves).

GO      ?= go
BIN     ?= bin/brighter
PKGS    ?= ./...

# The container image (make image): version, revision and time from git, so the
# same commit gives the same digest. LICENSES is the licenses label (SPDX); the
# repository declares no license yet, hence NOASSERTION.
VERSION           ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
LICENSES          ?= NOASSERTION
ARCH              ?= $(shell $(GO) env GOARCH)

.PHONY: all build image test test-go test-checks test-checks-logged test-stress test-times unit deps vet staticcheck lint fmt-check bench bench-smoke soak conformance-ledger conformance-rocketmq-real mutants mutants-ci sqs-emulator clean

all: build

# Stamped as make image stamps the image's binary: brighter version prints
# git describe's version and the commit (Go's own VCS stamping is off in a
# git worktree and under GOFLAGS=-buildvcs=false).
BUILD_LDFLAGS ?= -X main.version=$(VERSION) -X main.commit=$(REVISION)

# Static and -trimpath, as the image's binary is built (ociimage.BuildBinary):
# one build of the dependency tree serves both, and the version and image
# tests and the command tests' `brighter` (cmdtest.BuildBrighter), which
# build the binary too, find it in the build cache.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(BUILD_LDFLAGS)" -o $(BIN) ./cmd/brighter

# bin/brighter-image.tar (docker load, podman load, kind load image-archive)
# and bin/brighter-oci/ (an OCI layout), built without a Docker engine.
image:
	$(GO) run ./deploy/mkimage -out bin -version "$(VERSION)" -revision "$(REVISION)" -epoch "$(SOURCE_DATE_EPOCH)" -licenses "$(LICENSES)" -arch "$(ARCH)"

# Google's Pub/Sub emulator (the Pub/Sub tests start it, one per test
# binary: internal/broker/gcp/gcptest): installed with apt-get when missing
# and Java is there; otherwise one line says what to install.
PUBSUB_EMULATOR := /usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator

deps:
	@command -v node >/dev/null || { echo "node is required for the SQS emulator (fauxqs): apt-get install nodejs npm"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@if [ ! -x $(PUBSUB_EMULATOR) ] && ! dpkg -L google-cloud-cli-pubsub-emulator 2>/dev/null | grep -q '/bin/cloud-pubsub-emulator$$'; then \
	  command -v java >/dev/null || { echo "Google's Pub/Sub emulator is required and needs Java: apt-get install openjdk-17-jre-headless google-cloud-cli-pubsub-emulator"; exit 1; }; \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && $$sudo apt-get install -y -qq google-cloud-cli-pubsub-emulator >/dev/null \
	    || { echo "could not install Google's Pub/Sub emulator: apt-get install google-cloud-cli-pubsub-emulator (from the Google Cloud CLI apt source)"; exit 1; }; \
	fi
	@# tmux drives dlq triage's end-to-end test in a real terminal, so the
	@# triage screen is tested as an operator sees it.
	@if ! command -v tmux >/dev/null; then \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && $$sudo apt-get install -y -qq tmux >/dev/null \
	    || { echo "could not install tmux (dlq triage's terminal test needs it): apt-get install tmux"; exit 1; }; \
	fi

# Every build of make test is -trimpath (the tests, go vet, staticcheck, the
# mutants' copies of the tree, the benchmark smoke run), as make build is.
# Without it the Go build cache keys each package of this module by its
# directory, so a clean clone (CI, a new worktree) compiled the whole module
# again, with -race and without, however warm the cache; with it, the
# packages a commit did not change come from the cache, whichever checkout
# built them (docs/testing.md, run 11). Stack traces and race reports name
# files by import path (github.com/brightergo/brighter/internal/...).
TRIMPATH ?= -trimpath
# The test binaries are linked without DWARF (-ldflags=-w: a debugger's
# tables; panics and race reports take their files and lines from the
# binary's own symbol table): every run links each of them again, and the
# DWARF was about a fifth of a link's CPU (docs/testing.md, run 11).
TEST_LDFLAGS ?= -w

vet:
	$(GO) vet $(TRIMPATH) $(PKGS)

# staticcheck loads the packages through go list, which reads GOFLAGS.
staticcheck:
	GOFLAGS="$${GOFLAGS:+$$GOFLAGS }$(TRIMPATH)" $(GO) tool staticcheck $(PKGS)

fmt-check:
	@out=$$(gofmt -l cmd internal deploy); if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi

lint: fmt-check vet staticcheck

# TEST_P packages are tested at once (go test -p; its default is the
# cores): most packages wait on emulators (leases, ack deadlines), not the
# CPU. On a 2-core machine the whole suite took 7m19s at -p 4, against at
# least 9m53s at -p 2, half its 19m46s of package times
# (docs/testing.md).
TEST_P ?= 4
# TEST_FIRST are the packages with the longest tests, named before the rest
# so go test starts them first (it runs packages in the order named, each
# once): started last, the conformance suite alone ran 7 minutes past
# everything else.
TEST_FIRST ?= ./internal/conformance ./internal/cmd/root ./internal/cmd/dlq/edit ./internal/cmd/consume ./internal/cmd/dlq/triage ./internal/broker/sqs
# The command tests start `brighter` as a process hundreds of times: a plain
# build of ./cmd/brighter (cmdtest.SubprocessEnv), made once per test binary
# from the build cache that make build fills first, while everything in the
# test binaries runs with -race (docs/testing.md, "The brighter the tests
# start").
#
# The suite runs as two lanes at once (make -j2): the tests (test-go), and
# the checks (test-checks: gofmt, go vet, staticcheck, the CI mutants, the
# benchmark smoke run, one after another, about 4 minutes alone). The
# checks fill the CPU the tests leave idle instead of adding their minutes
# before and after them (docs/testing.md, run 10). The tests' output comes
# as each package ends; the checks' output goes to bin/test-checks.log and
# is printed whole when they end. make fails if either lane failed, after
# both have ended.
# The checks run at the lowest CPU priority (nice 19), so that they take
# only the CPU the tests leave idle and never slow a test that waits on a
# broker's clock (a lease, a visibility timeout). The first two-lane run,
# at the same priority and beside other developers' benchmarks (load 23 on
# 2 cores), failed two SQS FIFO lease rows whose calls missed their deadlines.
CHECKS_NICE ?= nice -n 19
test: deps build
	@$(MAKE) --no-print-directory -j2 test-go test-checks-logged

test-checks-logged:
	@mkdir -p bin
	@echo "test-checks: gofmt, go vet, staticcheck, the CI mutants and the benchmark smoke run, beside the tests (nice 19); their output is in bin/test-checks.log, printed here when they end"
	@$(MAKE) --no-print-directory test-checks > bin/test-checks.log 2>&1; rc=$$?; cat bin/test-checks.log; exit $$rc

test-go:
	@echo "test-go: started $$(date -u +%T)"
	$(GO) test $(TRIMPATH) -ldflags=$(TEST_LDFLAGS) -race -count=1 -p $(TEST_P) -timeout 20m $(TEST_FIRST) $(PKGS)
	@echo "test-go: ended $$(date -u +%T)"

test-checks:
	@echo "test-checks: started $$(date -u +%T)"
	$(CHECKS_NICE) $(MAKE) --no-print-directory lint
	$(CHECKS_NICE) $(MUTANTS_CI)
	$(CHECKS_NICE) $(MAKE) --no-print-directory bench-smoke
	@echo "test-checks: ended $$(date -u +%T)"

# The suite under load, to find the tests that fail only on a busy machine
# (not part of make test): STRESS_RUNS runs of
# every test with -race beside a CPU hog of STRESS_HOG spinning goroutines
# per core (internal/tools/stress); each failure is reported by test name
# with the runs it failed in, each run's go test -json kept in bin/stress/.
# docs/testing.md records the results. The `brighter` processes the command
# tests start are the -race test binaries themselves here
# (BRIGHTER_TEST_SUBPROCESS=self), so that a data race in a path only a
# process reaches (signals, SIGKILLs, the tmux consoles) is hunted too.
STRESS_RUNS ?= 5
STRESS_HOG  ?= 2
test-stress: deps
	BRIGHTER_TEST_SUBPROCESS=self $(GO) run ./internal/tools/stress -runs $(STRESS_RUNS) -hog $(STRESS_HOG) -out bin/stress -- $(TRIMPATH) -race -count=1 -p $(TEST_P) -timeout 40m $(PKGS)

# One run of the suite on its own, then its per-package times and slowest
# tests as the Markdown tables of docs/testing.md.
test-times: deps
	$(GO) run ./internal/tools/stress -runs 1 -hog 0 -out bin/times -- $(TRIMPATH) -race -count=1 -p $(TEST_P) -timeout 40m $(PKGS) || true
	$(GO) run ./internal/tools/stress -summarize bin/times/run-1.json

# The mutation check, so that a test that cannot fail is found: every
# deliberate bug of internal/conformance/mutants (a catalogue per layer:
# conformance cells, pump, transports, dlq, handlers, config), one at a time on a copy of the
# tree, must fail the tests named for it. `mutants` runs them all and
# records the table in docs/conformance.md (TestCatalogueRecorded checks it
# in make test); `mutants-ci` (part of make test) runs the few marked CI, two
# at a time (-parallel 2: each in its own copy of the tree), about a
# minute or two.
mutants: deps
	$(GO) run $(TRIMPATH) ./internal/conformance/mutants -set all -write docs/conformance.md

mutants-ci: deps
	$(MUTANTS_CI)

MUTANTS_CI = $(GO) run $(TRIMPATH) ./internal/conformance/mutants -set ci -parallel 2

# Quick local iteration: every test without -race. CI never uses it.
unit: deps
	$(GO) test -count=1 $(PKGS)

# Benchmarks (not CI). A pump benchmark that allocates more per message
# than its recorded figure (internal/pump/bench_test.go recordedAllocs,
# docs/performance.md) fails the run: BRIGHTER_BENCH_ALLOC_CHECK.
bench: deps
	BRIGHTER_BENCH_ALLOC_CHECK=1 $(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m $(PKGS)

# Every benchmark of BENCH_SMOKE_PKGS run once (-benchtime 1x): a benchmark
# that no longer runs (its input refused, a fixture gone) fails here rather
# than at the next `make bench`. Part of `make test` (its checks lane, last). The default is the
# packages where one run is cheap (43 s with their compilation on a
# 2-core machine under load); the others take, once each: internal/inspect
# 143 s, cmd/brighter 46 s (emulators), internal/config 41 s (hostile files
# at each limit), internal/tui 41 s; all of ./... took 8 min with
# compilation (docs/performance.md "Benchmark smoke run").
# make bench-smoke BENCH_SMOKE_PKGS=./... runs them all.
BENCH_SMOKE_PKGS ?= ./internal/broker/memory ./internal/broker/sqs ./internal/lint ./internal/observe ./internal/pump ./internal/telemetry

# The DLQ verb benchmarks (internal/inspect: replay, archive, restore,
# purge against a plain SDK loop on fauxqs) run too, with tiny counts
# (BRIGHTER_BENCH_SMOKE: one pair of 30 messages each, a few seconds); the
# run fails unless all four report, so a renamed one cannot drop out.
DLQ_BENCH_SMOKE = '^BenchmarkDLQ(Replay|Archive|Restore|Purge)$$'
# The consume benchmarks (internal/cmd/consume: brighter consume against a
# plain SDK loop on fauxqs and Google's emulator, calls counted on the
# wire) likewise: one pair of 40 messages per case; all eight must report.
CONSUME_BENCH_SMOKE = '^BenchmarkConsume(SQS|PubSub)$$'
bench-smoke:
	$(GO) test $(TRIMPATH) -run '^$$' -bench . -benchtime 1x -timeout 10m $(BENCH_SMOKE_PKGS)
	@out=$$(BRIGHTER_BENCH_SMOKE=1 $(GO) test $(TRIMPATH) -run '^$$' -bench $(CONSUME_BENCH_SMOKE) -benchtime 1x -timeout 8m ./internal/cmd/consume 2>&1); rc=$$?; \
	echo "$$out"; test $$rc -eq 0 || exit $$rc; \
	n=$$(echo "$$out" | grep -c '^BenchmarkConsume[A-Za-z]*/.*ns/op'); test "$$n" -eq 10 || { echo "bench-smoke: $$n of the 10 consume benchmarks ran"; exit 1; }
	@out=$$(BRIGHTER_BENCH_SMOKE=1 $(GO) test $(TRIMPATH) -run '^$$' -bench $(DLQ_BENCH_SMOKE) -benchtime 1x -timeout 5m ./internal/inspect 2>&1); rc=$$?; \
	echo "$$out"; test $$rc -eq 0 || exit $$rc; \
	n=$$(echo "$$out" | grep -c '^BenchmarkDLQ'); test "$$n" -eq 4 || { echo "bench-smoke: $$n of the 4 DLQ verb benchmarks ran"; exit 1; }

# The soak harness (docs/reliability.md): messages with per-message plans
# (acknowledge, defer then acknowledge, always defer, reject) through two
# consume processes per transport (fauxqs, pstest, the RocketMQ test broker)
# behind a TCP fault proxy, with SIGKILLs, graceful stops with work in hand,
# connection resets, latency, a black hole and a dead-letter outage, an
# /events reader on every process, for SOAK_DURATION (make soak
# SOAK_DURATION=1h). It ends with a report whose lines must be 0 (lost, over
# budget, dead-lettered without a run, unexplained duplicates, ...). Not part
# of make test, which runs its 60-second form (TestSoak).
# Each budget dead-letter's rejectionMessage must name its deliveries
# and handler runs (BRIGHTER_SOAK_CHECK_REJECTION_RUNS=0 turns that off).
SOAK_DURATION ?= 10m
soak: deps
	BRIGHTER_SOAK_DURATION=$(SOAK_DURATION) $(GO) test -count=1 -timeout 3h -v -run '^TestSoak$$' ./internal/cmd/consume

# The SQS/SNS emulator the tests use, on 127.0.0.1:4566, in the foreground
# (Ctrl-C stops it). Point the AWS SDK at it with AWS_ENDPOINT_URL.
# fauxqs on 127.0.0.1:$(FAUXQS_PORT) (make sqs-emulator FAUXQS_PORT=4577);
# a busy port is one line on stderr and exit 1. npm ci runs only when
# node_modules is missing or older than package-lock.json (never under a
# running test's emulator otherwise). fauxqs stops with make, however make
# is stopped (Ctrl-C, kill PID, kill -9 PID): it watches its parent
# (FAUXQS_EXIT_WITH_PARENT), so no orphan keeps the port
# (sqstest.TestMakeSQSEmulator*).
FAUXQS_PORT ?= 4566
sqs-emulator: node_modules/.package-lock.json
	@FAUXQS_PORT=$(FAUXQS_PORT) FAUXQS_EXIT_WITH_PARENT=1 exec node internal/broker/sqs/sqstest/serve-local.mjs

# npm writes node_modules/.package-lock.json on every install: older than
# package-lock.json (or missing) means node_modules is stale.
node_modules/.package-lock.json: package-lock.json
	@command -v node >/dev/null || { echo "node is required for the SQS emulator (fauxqs): apt-get install nodejs npm"; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The RocketMQ conformance rows against a real RocketMQ 5 (needs a Docker
# engine; not run in CI, which has none): records AC-23 on a real broker.
conformance-rocketmq-real:
	docker compose -f compose/docker-compose-rocketmq.yaml up -d --wait
	BRIGHTER_ROCKETMQ_ENDPOINT=127.0.0.1:8081 $(GO) test -count=1 -v -run 'TestRocketMQConformance' ./internal/conformance

# Rewrite docs/conformance.md from a full conformance run.
conformance-ledger: deps
	BRIGHTER_UPDATE_LEDGER=1 $(GO) test $(TRIMPATH) -race -count=1 -timeout 20m ./internal/conformance

clean:
	rm -rf bin node_modules
