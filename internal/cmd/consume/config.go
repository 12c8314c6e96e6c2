package consume

import (
	"errors"
	"fmt"
	"io"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
)

// stdinConfig is the -c/--config value that reads the subscriptions file
// from standard input, as `brighter lint -` does.
const stdinConfig = "-"

// stdinName is how positions and errors name a subscriptions file read
// from standard input (lint's name for it).
const stdinName = "<stdin>"

// loadConfig reads the subscriptions file -c/--config names, or, for "-",
// from standard input: relative paths in it (a memory seed, an exec
// handler's command) are then relative to the current directory. Its
// secrets are added to the redactor. A file that cannot be read or does
// not parse is a usage error (exit 2), as is "-" with --tui, whose
// dashboard reads its keys from standard input.
func (o *Options) loadConfig() (*config.File, error) {
	if o.configPath != stdinConfig {
		return cmdutil.LoadConfig(o.io, o.configPath)
	}
	if o.tui {
		return nil, cmdutil.UsageErr(errors.New("-c - reads the subscriptions file from standard input, where --tui reads its keys: name the file instead"))
	}
	data, err := io.ReadAll(o.io.In)
	if err != nil {
		return nil, cmdutil.UsageErr(fmt.Errorf("read standard input: %w", err))
	}
	f, err := config.Parse(stdinName, data, o.io.Getenv)
	if err != nil {
		return nil, cmdutil.UsageErr(err)
	}
	o.io.Redactor.Add(f.Secrets()...)
	return f, nil
}
