package layers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/brightergo/brighter/"

// Levels of the module's packages, lowest first. A package imports only
// packages of a lower level, with two exceptions: at levelApp (the
// applications of the pump and the transports) siblings may import each
// other (tui reads observe, lint/live extends lint), and a transport's own
// sub-packages (its test support) may import it. The transports and the
// pump share levelEngine, so neither imports the other; the pump's test
// support (internal/pump/pumptest) is in the pump's group, so it may import
// the pump and never a transport.
const (
	levelLeaf   = iota // redact, broker/limits, polltest: leaves with no module imports, used by every layer
	levelBase          // message, config, tui/kit and other leaves
	levelBroker        // internal/broker: the interfaces and the routing
	levelEngine        // the pump, and each transport with its test support
	levelApp           // handler, observe, telemetry, inspect, lint, tui, demo, conformance
	levelCmd           // cmd/..., internal/cmd/..., deploy/..., internal/conformance/mutants, internal/tools/...
)

// level returns the level of pkg (a path relative to the module) and its
// group: the tree within which same-level imports are allowed (the
// transport's root at levelEngine, "" where any sibling may be imported).
// ok is false for a package the table does not place: a new package must be
// placed here before it lands.
func level(pkg string) (lvl int, group string, ok bool) {
	switch {
	case pkg == "internal/redact", // the one redaction rule (docs/security.md)
		pkg == "internal/broker/limits", // the brokers' limits in bytes
		pkg == "internal/polltest":      // test support: the tests' one poll-until loop
		return levelLeaf, pkg, true
	case pkg == "internal/message", pkg == "internal/config", pkg == "internal/ociimage",
		pkg == "internal/faultproxy", // test support (a TCP fault proxy), imports nothing of ours
		pkg == "internal/tui/kit",    // what the terminal screens share (styles, keys, lines), imports nothing of ours
		pkg == "internal/export",     // the output formats of -o and the one JSON writer
		pkg == "internal/tlsfiles",   // a TLS client configuration from PEM files (the http handler's, checked by lint)
		pkg == "internal/execfile":   // an exec handler's command and its #! interpreter (the handler's start-up check, lint's)
		return levelBase, pkg, true
	case pkg == "internal/broker":
		return levelBroker, pkg, true
	case pkg == "internal/pump", pkg == "internal/pump/pumptest": // the pump and its test support
		return levelEngine, "internal/pump", true
	case strings.HasPrefix(pkg, "internal/broker/"):
		parts := strings.SplitN(pkg, "/", 4)
		return levelEngine, strings.Join(parts[:3], "/"), true
	case slices.Contains([]string{"internal/handler", "internal/observe", "internal/telemetry", "internal/inspect",
		"internal/tui", "internal/tui/triage", "internal/demo", "internal/conformance", "internal/layers",
		"internal/transport"}, pkg), // the transports' wiring for the commands: above every transport, below cmd
		pkg == "internal/lint", strings.HasPrefix(pkg, "internal/lint/"):
		return levelApp, "", true
	case strings.HasPrefix(pkg, "cmd/"), pkg == "deploy", strings.HasPrefix(pkg, "deploy/"),
		strings.HasPrefix(pkg, "internal/cmd/"),   // the commands, one package each, and what they share
		pkg == "internal/conformance/mutants",     // a program (make mutants), like the commands
		strings.HasPrefix(pkg, "internal/tools/"): // the developers' programs (make test-stress)
		return levelCmd, "", true
	}
	return 0, "", false
}

// violations returns one line per import of imports (package -> the module
// packages it imports, paths relative to the module) that runs up or across
// the levels, and per package the table does not place.
func violations(imports map[string][]string) []string {
	var out []string
	for from, tos := range imports {
		lf, gf, ok := level(from)
		if !ok {
			out = append(out, fmt.Sprintf("%s: not placed in a level (add it to level in layers_test.go)", from))
			continue
		}
		for _, to := range tos {
			lt, gt, ok := level(to)
			switch {
			case !ok:
				continue // reported as a package of its own
			case lt < lf:
			case lt == lf && (gf == "" || gf == gt):
			default:
				out = append(out, fmt.Sprintf("%s imports %s: an import up or across the layers", from, to))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayers_DownwardImportsOnly loads every package of the module
// (without its tests: a transport's integration tests run the pump over
// it) and fails on any import that runs up or across the layers.
func TestLayers_DownwardImportsOnly(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports, Dir: "../.."}, "./...")
	if err != nil {
		t.Fatalf("load the module's packages: %v", err)
	}
	imports := map[string][]string{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		from, ok := strings.CutPrefix(p.PkgPath, module)
		if !ok {
			continue
		}
		imports[from] = nil
		for path := range p.Imports {
			if to, ok := strings.CutPrefix(path, module); ok {
				imports[from] = append(imports[from], to)
			}
		}
	}
	for _, want := range []string{"internal/pump", "internal/broker", "internal/broker/gcp", "internal/demo", "cmd/brighter", "internal/cmd/root"} {
		if _, ok := imports[want]; !ok {
			t.Fatalf("package %s not loaded: the test would check nothing (loaded %d)", want, len(imports))
		}
	}
	for _, v := range violations(imports) {
		t.Error(v)
	}
}

// TestLayers_CheckerCatchesUpwardImports feeds the checker the
// imports the rule forbids (the old gcpdemo under internal/broker importing
// the pump, the pump importing a transport, a transport importing another,
// broker importing a transport, the pump's test support importing a
// transport, the screens' kit importing a screen, a package nobody placed)
// and the ones it allows, so the layering test cannot pass by checking
// nothing.
func TestLayers_CheckerCatchesUpwardImports(t *testing.T) {
	got := violations(map[string][]string{
		"internal/broker/gcp/gcpdemo": {"internal/pump", "internal/broker/gcp", "internal/message"},
		"internal/pump":               {"internal/broker/sqs", "internal/broker"},
		"internal/pump/pumptest":      {"internal/pump", "internal/broker", "internal/broker/gcp"},
		"internal/broker/sqs":         {"internal/broker/gcp", "internal/broker"},
		"internal/broker":             {"internal/broker/memory", "internal/message"},
		"internal/message":            {"internal/config"},
		"internal/newthing":           {"internal/message"},
		"internal/tui":                {"internal/observe", "internal/pump", "internal/tui/kit"},
		"internal/tui/kit":            {"internal/tui"},
		"cmd/brighter":                {"internal/demo", "internal/broker/sqs"},
	})
	want := []string{
		"internal/broker imports internal/broker/memory: an import up or across the layers",
		"internal/broker/gcp/gcpdemo imports internal/pump: an import up or across the layers",
		"internal/broker/sqs imports internal/broker/gcp: an import up or across the layers",
		"internal/message imports internal/config: an import up or across the layers",
		"internal/newthing: not placed in a level (add it to level in layers_test.go)",
		"internal/pump imports internal/broker/sqs: an import up or across the layers",
		"internal/pump/pumptest imports internal/broker/gcp: an import up or across the layers",
		"internal/tui/kit imports internal/tui: an import up or across the layers",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// brokerSDKs are the module paths of the broker SDKs (AWS, Pub/Sub,
// RocketMQ, gRPC): only the transports and internal/transport call them.
var brokerSDKs = []string{"github.com/aws/", "cloud.google.com/go/pubsub", "github.com/apache/rocketmq-clients/", "google.golang.org/grpc"}

// sdkImports returns, one line each, the imports of pkg that are a broker
// SDK's.
func sdkImports(pkg string, imports []string) []string {
	var out []string
	for _, path := range imports {
		for _, sdk := range brokerSDKs {
			if strings.HasPrefix(path, sdk) {
				out = append(out, fmt.Sprintf("%s imports %s: a broker SDK belongs in its transport or internal/transport", pkg, path))
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// commandTestSupport are the packages under internal/cmd that are test
// support, not commands: what the dlq verbs' tests share, which seeds,
// holds and reads messages on the emulators with the SDKs as the tests'
// own files do (test files are not loaded here either).
var commandTestSupport = map[string]bool{"internal/cmd/dlq/dlqtest": true}

// commandPackages are the patterns of the command packages: the program
// and every package under internal/cmd.
var commandPackages = []string{"./cmd/...", "./internal/cmd/..."}

// TestLayers_CommandsImportNoBrokerSDK loads every command package (cmd/...
// and internal/cmd/...) without its tests and fails on any import of a
// broker SDK: the commands reach a transport only through the
// internal/transport registry, so that adding a transport does not touch
// them.
func TestLayers_CommandsImportNoBrokerSDK(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports, Dir: "../.."}, commandPackages...)
	if err != nil {
		t.Fatalf("load the command packages: %v", err)
	}
	loaded := map[string]bool{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		from := strings.TrimPrefix(p.PkgPath, module)
		loaded[from] = len(p.Imports) > 0
		if commandTestSupport[from] {
			continue
		}
		var imports []string
		for path := range p.Imports {
			imports = append(imports, path)
		}
		for _, v := range sdkImports(from, imports) {
			t.Error(v)
		}
	}
	for _, want := range []string{"cmd/brighter", "internal/cmd/root", "internal/cmd/factory"} {
		if !loaded[want] {
			t.Fatalf("%s not loaded with its imports (%d packages): the test would check nothing", want, len(pkgs))
		}
	}
}

// TestLayers_CheckerCatchesBrokerSDKImports feeds the SDK check each broker
// SDK's imports and some it allows, so that it cannot pass by matching
// nothing.
func TestLayers_CheckerCatchesBrokerSDKImports(t *testing.T) {
	got := sdkImports("cmd/brighter", []string{
		"github.com/aws/aws-sdk-go-v2/service/sqs", "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb",
		"github.com/apache/rocketmq-clients/golang/v5", "google.golang.org/grpc/codes",
		"github.com/spf13/cobra", module + "internal/transport", "google.golang.org/protobuf/proto",
	})
	want := []string{
		"cmd/brighter imports cloud.google.com/go/pubsub/v2/apiv1/pubsubpb: a broker SDK belongs in its transport or internal/transport",
		"cmd/brighter imports github.com/apache/rocketmq-clients/golang/v5: a broker SDK belongs in its transport or internal/transport",
		"cmd/brighter imports github.com/aws/aws-sdk-go-v2/service/sqs: a broker SDK belongs in its transport or internal/transport",
		"cmd/brighter imports google.golang.org/grpc/codes: a broker SDK belongs in its transport or internal/transport",
	}
	if !slices.Equal(got, want) {
		t.Errorf("SDK imports:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
