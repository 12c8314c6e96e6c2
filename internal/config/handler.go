package config

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// resolvePath does; a bare name (python3) is left for a PATH lookup.
func (d *decoder) resolveCommand(c string) string {
	if !strings.ContainsRune(c, '/') || filepath.IsAbs(c) {
		return c
	}
	p := filepath.Join(d.dir, c)
	if !strings.ContainsRune(p, '/') {
		p = "./" + p // still a path, never a PATH lookup
	}
	return p
}

// resolvePath makes a relative path relative to the config file's directory.
func (d *decoder) resolvePath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.dir, p)
}

var (
	handlerTypes  = schemaEnum("$defs", "handler", "properties", "type")
	handlerFields = map[HandlerType][]string{
		HandlerBuiltin: {"type", "name", "script"},
		HandlerExec:    {"type", "timeout", "command", "args", "env"},
		HandlerHTTP:    {"type", "timeout", "url", "headers", "tls"},
	}
	allHandlerFields = []string{"type", "timeout", "name", "script", "command", "args", "env", "url", "headers", "tls"}
	tlsFields        = []string{"caFile", "certFile", "keyFile", "insecureSkipVerify"}
)

func (d *decoder) handler(he entry, h *Handler) {
	h.Timeout = DefaultHandlerTimeout
	ents, ok := d.mapEntries(he.val, he.path, allHandlerFields)
	if !ok {
		return
	}
	by := map[string]entry{}
	for _, e := range ents {
		by[e.key] = e
	}
	te, ok := by["type"]
	if !ok {
		d.errorf(he.keyN, he.path+".type", "required field is missing; valid values are %s", strings.Join(handlerTypes, ", "))
		return
	}
	var t string
	if !d.enum(te, &t, "handler type", handlerTypes) {
		return
	}
	h.Type = HandlerType(t)
	allowed := handlerFields[h.Type]
	for _, e := range ents {
		if !slices.Contains(allowed, e.key) {
			d.errorf(e.keyN, e.path, "field %q does not belong to a %s handler; %s handlers take %s", e.key, t, t, strings.Join(allowed, ", "))
			continue
		}
		switch e.key {
		case "timeout":
			d.dur(e, &h.Timeout, durRange{positive: true})
		case "name":
			d.enum(e, &h.Name, "builtin handler", builtinNames)
		case "script":
			h.Script = d.script(e)
		case "command":
			if d.str(e, &h.Command) && h.Command == "" {
				d.errorf(e.val, e.path, "must not be empty")
			}
			h.Command = d.resolveCommand(h.Command)
		case "args":
			h.Args = d.strList(e)
		case "env":
			h.Env = d.strMap(e)
		case "url":
			if d.str(e, &h.URL) {
				d.httpURL(e, h.URL)
			}
		case "headers":
			h.Headers = d.strMap(e)
		case "tls":
			h.TLS = &TLS{}
			for _, e := range d.entriesOf(e, tlsFields) {
				switch e.key {
				case "caFile":
					d.str(e, &h.TLS.CAFile)
					h.TLS.CAFile = d.resolvePath(h.TLS.CAFile)
				case "certFile":
					d.str(e, &h.TLS.CertFile)
					h.TLS.CertFile = d.resolvePath(h.TLS.CertFile)
				case "keyFile":
					d.str(e, &h.TLS.KeyFile)
					h.TLS.KeyFile = d.resolvePath(h.TLS.KeyFile)
				case "insecureSkipVerify":
					d.boolean(e, &h.TLS.InsecureSkipVerify)
				}
			}
			if (h.TLS.CertFile == "") != (h.TLS.KeyFile == "") {
				d.errorf(e.keyN, e.path, "certFile and keyFile go together; set both or neither")
			}
		}
	}
	switch h.Type {
	case HandlerBuiltin:
		_, hasName := by["name"]
		se, hasScript := by["script"]
		switch {
		case hasName && hasScript:
			d.errorf(se.keyN, se.path, "name and script are mutually exclusive; set one")
		case !hasName && !hasScript:
			d.errorf(he.keyN, he.path+".name", "required field is missing; a builtin handler needs name (%s) or script", strings.Join(builtinNames, ", "))
		}
	case HandlerExec:
		if _, ok := by["command"]; !ok {
			d.errorf(he.keyN, he.path+".command", "required field is missing; an exec handler needs the command to run")
		}
	case HandlerHTTP:
		if _, ok := by["url"]; !ok {
			d.errorf(he.keyN, he.path+".url", "required field is missing; an http handler needs the url to POST to")
		}
	}
}

// script reads a builtin script: "defer,defer,ack" or a list of outcomes.
func (d *decoder) script(e entry) []string {
	var items []string
	if _, isList := d.resolve(e.val, e.path).(*ast.SequenceNode); isList {
		items = d.strList(e)
	} else {
		var s string
		if !d.str(e, &s) {
			return nil
		}
		if strings.TrimSpace(s) == "" {
			d.errorf(e.val, e.path, "must not be empty; list outcomes such as \"defer,defer,ack\"")
			return nil
		}
		items = strings.Split(s, ",")
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		if v, ok := matchEnum(it, builtinNames); ok {
			out = append(out, v)
			continue
		}
		d.errorf(e.val, e.path, "item %d %q is not a builtin outcome%s; valid values are %s", i+1, it, suggestion(it, builtinNames), strings.Join(builtinNames, ", "))
		return nil
	}
	return out
}
