package infra

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/brightergo/brighter/internal/config"
)

// Format is an infrastructure file format, told by content.
type Format string

// The formats --infra reads.
const (
	// FormatTerraformPlan is the JSON of `terraform show -json PLAN`.
	FormatTerraformPlan Format = "terraform-plan"
	// FormatTerraform is a Terraform configuration file (.tf, HCL).
	FormatTerraform Format = "terraform"
	// FormatCloudFormation is a CloudFormation template, JSON or YAML.
	FormatCloudFormation Format = "cloudformation"
	// FormatKubernetes is a Kubernetes manifest (Config Connector, ACK).
	FormatKubernetes Format = "kubernetes"
)

// Limits of one infrastructure file: those of a subscriptions file
// (internal/config), so that --infra costs at most what the subscriptions
// file may.
const (
	// MaxFileSize is the largest file read, in bytes (config.MaxFileSize).
	MaxFileSize = config.MaxFileSize
	// MaxNestingDepth is the deepest nesting of objects, arrays or blocks a
	// reader accepts (config.MaxNestingDepth).
	MaxNestingDepth = config.MaxNestingDepth
	// MaxFiles is the most files one run reads from the paths given
	// (directories walked included).
	MaxFiles = 10_000
)

// ReadFunc reads one file of its format (name as findings show it) into
// resources. A file it cannot read is an *Error.
type ReadFunc func(name string, data []byte) ([]Resource, error)

// Readers maps each format to its reader; a format without one is
// reported as unsupported. The command supplies the readers of the
// sub-packages (terraform, ...), which import this package.
type Readers map[Format]ReadFunc

// Error is a problem of one infrastructure file at a position: a syntax
// error, a limit exceeded, a value of the wrong type.
type Error struct {
	Pos config.Position
	Msg string
}

// Error returns "FILE:LINE:COL: message".
func (e *Error) Error() string {
	if !e.Pos.IsValid() {
		return e.Pos.File + ": " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Errorf returns an *Error at pos.
func Errorf(pos config.Position, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// ErrNotInfrastructure is wrapped by Detect's error for a file of no
// format --infra reads.
var ErrNotInfrastructure = errors.New("not a Terraform plan JSON, .tf file, CloudFormation template or Kubernetes manifest")

var (
	hclBlock   = regexp.MustCompile(`(?m)^\s*(resource|variable|provider|terraform|module|locals|data|output)\s+("|\{)`)
	yamlCFN    = regexp.MustCompile(`(?m)^(AWSTemplateFormatVersion\s*:|\s+Type\s*:\s*['"]?AWS::)`)
	yamlKind   = regexp.MustCompile(`(?m)^kind\s*:`)
	yamlAPIVer = regexp.MustCompile(`(?m)^apiVersion\s*:`)
)

// Detect tells the format of a file from its content (its name breaks
// ties only: a .tf file is Terraform). The error wraps
// ErrNotInfrastructure.
func Detect(name string, data []byte) (Format, error) {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		switch {
		case bytes.Contains(data, []byte(`"format_version"`)) && (bytes.Contains(data, []byte(`"terraform_version"`)) || bytes.Contains(data, []byte(`"planned_values"`))):
			return FormatTerraformPlan, nil
		case bytes.Contains(data, []byte(`"AWSTemplateFormatVersion"`)) || bytes.Contains(data, []byte(`"AWS::`)):
			return FormatCloudFormation, nil
		case bytes.Contains(data, []byte(`"apiVersion"`)) && bytes.Contains(data, []byte(`"kind"`)):
			return FormatKubernetes, nil
		}
		return "", fmt.Errorf("%s: %w", name, ErrNotInfrastructure)
	}
	switch {
	case strings.HasSuffix(name, ".tf") || hclBlock.Match(data):
		return FormatTerraform, nil
	case yamlCFN.Match(data):
		return FormatCloudFormation, nil
	case yamlKind.Match(data) && yamlAPIVer.Match(data):
		return FormatKubernetes, nil
	}
	return "", fmt.Errorf("%s: %w", name, ErrNotInfrastructure)
}

// walkable reports whether a file met walking a directory is worth
// reading: the extensions of the formats, not a Terraform lock or state.
func walkable(path string) bool {
	base := filepath.Base(path)
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".tfstate") || strings.HasSuffix(base, ".tfvars") {
		return false
	}
	switch filepath.Ext(base) {
	case ".tf", ".json", ".yaml", ".yml", ".template":
		return true
	}
	return false
}

// Load reads every path (a file, or a directory walked for files of the
// formats' extensions, hidden directories and node_modules skipped) with
// readers and returns the Set. A file named directly must be of a format
// Detect knows; a walked file of no format is skipped. read reads a file
// (os.ReadFile in production). Each problem is an error of its own,
// joined: a file over MaxFileSize, one of no format, a reader's *Error.
// The Set holds what could be read.
func Load(paths []string, readers Readers, read func(string) ([]byte, error)) (*Set, error) {
	if read == nil {
		read = os.ReadFile
	}
	set := &Set{}
	var errs []error
	var files []struct {
		path   string
		walked bool
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			files = append(files, struct {
				path   string
				walked bool
			}{p, false})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if walkable(path) {
				files = append(files, struct {
					path   string
					walked bool
				}{path, true})
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("walk %s: %w", p, err))
		}
	}
	if len(files) > MaxFiles {
		return set, fmt.Errorf("--infra names %d files, over the limit of %d", len(files), MaxFiles)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.path] {
			continue
		}
		seen[f.path] = true
		rs, err := loadFile(f.path, f.walked, readers, read)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if rs != nil || !f.walked {
			set.Add(f.path, rs)
		}
	}
	set.Attach()
	return set, errors.Join(errs...)
}

// loadFile reads one file; rs is nil, with no error, for a walked file of
// no format.
func loadFile(path string, walked bool, readers Readers, read func(string) ([]byte, error)) ([]Resource, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > MaxFileSize {
		return nil, Errorf(config.Position{File: path}, "the file is %d bytes, over the limit of %d bytes (%d MiB) for an infrastructure file", st.Size(), MaxFileSize, MaxFileSize>>20)
	}
	data, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ReadData(path, data, walked, readers)
}

// ReadData detects the format of data (named name) and reads it with its
// reader. lenient skips data of no format (rs nil, no error).
func ReadData(name string, data []byte, lenient bool, readers Readers) ([]Resource, error) {
	if len(data) > MaxFileSize {
		return nil, Errorf(config.Position{File: name}, "the file is %d bytes, over the limit of %d bytes (%d MiB) for an infrastructure file", len(data), MaxFileSize, MaxFileSize>>20)
	}
	format, err := Detect(name, data)
	if err != nil {
		if lenient {
			return nil, nil
		}
		return nil, err
	}
	r := readers[format]
	if r == nil {
		if lenient {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %s files are not read by this build", name, format)
	}
	rs, err := r(name, data)
	if err != nil {
		return nil, err
	}
	if rs == nil {
		rs = []Resource{}
	}
	return rs, nil
}

// Formats returns the formats readers reads, sorted.
func (r Readers) Formats() []Format {
	out := make([]Format, 0, len(r))
	for f := range r {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
