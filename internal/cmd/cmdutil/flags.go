package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// DefaultConfigPath is the subscriptions file a command reads without -c.
const DefaultConfigPath = "brighter.yaml"

// Values of the global flags, in the order help and completion show them.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"text", "json"}
)

// exclusiveAnnotation is the command annotation holding the groups of
// mutually exclusive flags MarkExclusive declared: the groups' flag names,
// space-separated, one group a line.
const exclusiveAnnotation = "brighter_mutually_exclusive"

// MarkExclusive declares names, flags of cmd, mutually exclusive: cobra's
// MarkFlagsMutuallyExclusive (which also keeps the others out of shell
// completion once one is given) plus a group that CheckExclusiveFlags
// checks first, from the root's PersistentPreRunE, so the user reads a
// usage error of brighter's own rather than cobra's "if any flags in the
// group [...] are set none of the others can be".
func MarkExclusive(cmd *cobra.Command, names ...string) {
	cmd.MarkFlagsMutuallyExclusive(names...)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	groups := cmd.Annotations[exclusiveAnnotation]
	if groups != "" {
		groups += "\n"
	}
	cmd.Annotations[exclusiveAnnotation] = groups + strings.Join(names, " ")
}

// CheckExclusiveFlags refuses, with a usage error (exit 2), a command line
// giving two or more flags of one group MarkExclusive declared on c:
// "--invalid and --native are mutually exclusive: give one of --dlq,
// --invalid, --native".
func CheckExclusiveFlags(c *cobra.Command) error {
	for group := range strings.Lines(c.Annotations[exclusiveAnnotation]) {
		names := strings.Fields(group)
		var given []string
		for _, n := range names {
			if f := c.Flags().Lookup(n); f != nil && f.Changed {
				given = append(given, "--"+n)
			}
		}
		if len(given) > 1 {
			return UsageErr(fmt.Errorf("%s are mutually exclusive: give one of --%s", AndList(given), strings.Join(names, ", --")))
		}
	}
	return nil
}

// AndList joins items as "a and b", "a, b and c".
func AndList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// CompleteValues registers a fixed list of values as the completion of each
// named flag of cmd (a persistent flag of the root included).
func CompleteValues(cmd *cobra.Command, values []string, flags ...string) {
	for _, name := range flags {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}

// SubscriptionNames completes subscription names from the subscriptions
// file the command line names with -c/--config (or brighter.yaml), each
// with its transport and channel as the description. A file that cannot be
// read completes nothing: completion never prints an error in the shell.
func SubscriptionNames(io *iostreams.IOStreams) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		path := DefaultConfigPath
		if fl := cmd.Flags().Lookup("config"); fl != nil && fl.Changed && fl.Value.Type() == "string" {
			path = fl.Value.String()
		}
		f, err := config.Load(path, io.Getenv)
		if err != nil {
			cobra.CompDebugln(fmt.Sprintf("subscription names: %v", err), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]cobra.Completion, 0, len(f.Subscriptions))
		for _, s := range f.Subscriptions {
			out = append(out, cobra.CompletionWithDesc(s.Name, fmt.Sprintf("%s %s", s.Transport, s.ChannelName)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteSubscriptionArg completes the first argument with subscription
// names (a URL is typed by hand) and nothing after it.
func CompleteSubscriptionArg(io *iostreams.IOStreams) cobra.CompletionFunc {
	names := SubscriptionNames(io)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 || cmd.Flags().Changed("subscription") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}

// LoadConfig reads the subscriptions file at path (environment references
// resolved through io.Getenv) and adds its secrets to io.Redactor; its
// errors are usage errors (exit 2), an empty path CheckConfigPath's.
func LoadConfig(io *iostreams.IOStreams, path string) (*config.File, error) {
	if err := CheckConfigPath(path); err != nil {
		return nil, err
	}
	f, err := config.Load(path, io.Getenv)
	if err != nil {
		return nil, UsageErr(ConfigNotFound(err, path))
	}
	io.Redactor.Add(f.Secrets()...)
	return f, nil
}

// CheckConfigPath refuses an empty subscriptions file name (-c "$FILE" in a
// script whose variable is unset): a usage error (exit 2) naming the flag
// rather than the system's "open : no such file or directory".
func CheckConfigPath(path string) error {
	if path != "" {
		return nil
	}
	return UsageErr(fmt.Errorf("-c/--config \"\": name a subscriptions file (without -c/--config, brighter reads %s in the current directory)", DefaultConfigPath))
}

// ConfigNotFound is err with a hint when it says that the subscriptions
// file at path does not exist (fs.ErrNotExist): for the default file
// (DefaultConfigPath, read when no file is named) one naming -c/--config;
// for a file the user named, where it was looked for and the YAML files
// there (FilesNear), since a hint to name a file would tell them to do
// what they did. lint and every command reading a subscriptions file give
// the same. Any other err is returned as it is.
func ConfigNotFound(err error, path string) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if path != DefaultConfigPath {
		return fmt.Errorf("%w (%s)", err, FilesNear(path))
	}
	return fmt.Errorf("%w: name the subscriptions file with -c/--config FILE (without it, brighter reads %s in the current directory)", err, DefaultConfigPath)
}

// maxFilesNear is how many YAML files FilesNear names.
const maxFilesNear = 5

// FilesNear says where a subscriptions file at path that does not exist
// was looked for and which YAML files (.yaml, .yml) are there, at most
// maxFilesNear of them in name order: "looked for in /work; the YAML
// files there: a.yaml, b.yml", or "looked for in /work, which has no YAML
// file", or only "looked for in /work/x, which does not exist".
func FilesNear(path string) string {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "looked for in " + dir + ", which does not exist"
		}
		return "looked for in " + dir
	}
	var names []string
	for _, e := range entries {
		if ext := strings.ToLower(filepath.Ext(e.Name())); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			names = append(names, e.Name())
		}
	}
	switch {
	case len(names) == 0:
		return "looked for in " + dir + ", which has no YAML file"
	case len(names) > maxFilesNear:
		return fmt.Sprintf("looked for in %s; the YAML files there: %s and %d more", dir, strings.Join(names[:maxFilesNear], ", "), len(names)-maxFilesNear)
	}
	return fmt.Sprintf("looked for in %s; the YAML files there: %s", dir, strings.Join(names, ", "))
}

// SelectSubscriptions returns the subscriptions of f named in names (in
// the order first named; a name given twice, as in -s orders,orders, is
// one subscription, never two pumps on one channel), or all of them when
// names is empty; a name f does not have is an error listing the valid
// ones.
func SelectSubscriptions(f *config.File, names []string) ([]*config.Subscription, error) {
	if len(names) == 0 {
		return f.Subscriptions, nil
	}
	var out []*config.Subscription
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			continue
		}
		s := f.Subscription(n)
		if s == nil {
			valid := make([]string, 0, len(f.Subscriptions))
			for _, s := range f.Subscriptions {
				valid = append(valid, s.Name)
			}
			return nil, fmt.Errorf("--subscription %q: no such subscription in %s; valid names are %v", redact.Quoted(n), redact.Cut(f.Path), valid)
		}
		out = append(out, s)
	}
	return out, nil
}
