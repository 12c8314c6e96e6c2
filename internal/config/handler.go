package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/net/http/httpguts"

	"github.com/brightergo/brighter/internal/redact"
)

// The handler block of a subscription: the code run for each message.

var handlerTable = []field[Handler]{
	{Field: Field{Name: "type", Kind: KindEnum, Required: true, Enum: handlerTypes, HandlerTypes: allHandlerTypes,
		Doc: "builtin, exec or http"},
		at: func(h *Handler) any { return (*string)(&h.Type) }, noun: "handler type", missing: "; valid values are " + strings.Join(handlerTypes, ", ")},
	{Field: Field{Name: "timeout", Kind: KindDuration, HandlerTypes: []HandlerType{HandlerExec, HandlerHTTP},
		Doc: "bounds one exec or http call"},
		at: func(h *Handler) any { return &h.Timeout }, def: DefaultHandlerTimeout, dur: durRange{positive: true}},
	{Field: Field{Name: "name", Kind: KindEnum, Enum: builtinNames, HandlerTypes: []HandlerType{HandlerBuiltin},
		Doc: "the builtin handler; exactly one of name and script"},
		at: func(h *Handler) any { return &h.Name }, noun: "builtin handler"},
	{Field: Field{Name: "script", Kind: KindScript, HandlerTypes: []HandlerType{HandlerBuiltin},
		Doc: "builtin outcomes by delivery count, the last repeating: \"defer,defer,ack\" or a list"},
		at: func(h *Handler) any { return &h.Script }},
	{Field: Field{Name: "command", Kind: KindText, HandlerTypes: []HandlerType{HandlerExec},
		Doc: "the program to run, without a shell; a relative path is relative to the file"},
		at: func(h *Handler) any { return &h.Command }, nonEmpty: true,
		after: func(d *decoder, _ entry, h *Handler) { h.Command = d.resolveCommand(h.Command) }},
	{Field: Field{Name: "args", Kind: KindList, HandlerTypes: []HandlerType{HandlerExec}, Doc: "the command's arguments"},
		at:    func(h *Handler) any { return &h.Args },
		after: func(d *decoder, e entry, h *Handler) { d.execArgs(e, h.Args) }},
	{Field: Field{Name: "env", Kind: KindMap, HandlerTypes: []HandlerType{HandlerExec}, Doc: "extra environment of the command"},
		at:    func(h *Handler) any { return &h.Env },
		after: func(d *decoder, e entry, h *Handler) { d.execEnv(e, h.Env) }},
	{Field: Field{Name: "url", Kind: KindText, HandlerTypes: []HandlerType{HandlerHTTP},
		Doc: "the http or https URL each message is POSTed to"},
		at:    func(h *Handler) any { return &h.URL },
		after: func(d *decoder, e entry, h *Handler) { d.httpURL(e, h.URL) }},
	{Field: Field{Name: "headers", Kind: KindMap, HandlerTypes: []HandlerType{HandlerHTTP}, Doc: "extra request headers (secrets: redacted wherever they appear)"},
		at:    func(h *Handler) any { return &h.Headers },
		after: func(d *decoder, e entry, h *Handler) { d.httpHeaders(e, h.Headers) }},
	{Field: Field{Name: "tls", Kind: KindBlock, HandlerTypes: []HandlerType{HandlerHTTP}, Doc: "the http client's TLS"}},
}

var tlsTable = []field[TLS]{
	{Field: Field{Name: "caFile", Kind: KindText, Doc: "CA certificates (PEM) trusted in addition to the system pool, relative to the file"},
		at:    func(t *TLS) any { return &t.CAFile },
		after: func(d *decoder, _ entry, t *TLS) { t.CAFile = d.resolvePath(t.CAFile) }},
	{Field: Field{Name: "certFile", Kind: KindText, Doc: "client certificate (PEM), with keyFile, relative to the file"},
		at:    func(t *TLS) any { return &t.CertFile },
		after: func(d *decoder, _ entry, t *TLS) { t.CertFile = d.resolvePath(t.CertFile) }},
	{Field: Field{Name: "keyFile", Kind: KindText, Doc: "client key (PEM), with certFile, relative to the file"},
		at:    func(t *TLS) any { return &t.KeyFile },
		after: func(d *decoder, _ entry, t *TLS) { t.KeyFile = d.resolvePath(t.KeyFile) }},
	{Field: Field{Name: "insecureSkipVerify", Kind: KindBoolean, Doc: "no server certificate check (tests and demos only)"},
		at: func(t *TLS) any { return &t.InsecureSkipVerify }},
}

var (
	handlerTypes     = schemaEnum("$defs", "handler", "properties", "type")
	allHandlerTypes  = []HandlerType{HandlerBuiltin, HandlerExec, HandlerHTTP}
	allHandlerFields = names(handlerTable)
	tlsFields        = names(tlsTable)
	// handlerFields lists, by handler type, the fields it takes, in
	// table order.
	handlerFields = func() map[HandlerType][]string {
		out := map[HandlerType][]string{}
		for _, f := range handlerTable {
			for _, t := range f.HandlerTypes {
				out[t] = append(out[t], f.Name)
			}
		}
		return out
	}()
)

// httpHeaders refuses what Go's net/http refuses to send, as the http
// handler does when consume starts the subscription (internal/handler's
// HTTP, in the same words): a header name that is not an HTTP token, and a
// value holding CR, LF or another control byte but tab. A value is a
// secret (secretField), so it is never shown.
func (d *decoder) httpHeaders(e entry, headers map[string]string) {
	if headers == nil {
		return // not a mapping: reported as such
	}
	ents, ok := d.mapEntries(e.val, e.path, nil)
	if !ok {
		return
	}
	for _, he := range ents {
		v, ok := headers[he.key]
		switch {
		case !httpguts.ValidHeaderFieldName(he.key):
			d.errorf(he.keyN, he.path, "header name %s is not valid (an HTTP token: letters, digits and !#$%%&'*+-.^_`|~)", redact.Quote(he.key))
		case ok && !httpguts.ValidHeaderFieldValue(v):
			d.errorf(he.keyN, he.path, "header %s: value is not a valid header value (no CR, LF or other control byte but tab)", redact.Quote(he.key))
		}
	}
}

// execArgs refuses an exec handler argument holding a NUL byte: no
// process can be given one, so every run would fail to start and every
// message spend its budget. An argument may be a secret: never shown.
func (d *decoder) execArgs(e entry, args []string) {
	n := d.resolve(e.val, e.path)
	for i, a := range args {
		if strings.IndexByte(a, 0) < 0 {
			continue
		}
		at := n
		if n != nil && n.Kind == yaml.SequenceNode && i < len(n.Content) {
			at = n.Content[i]
		}
		d.errorf(at, fmt.Sprintf("%s[%d]", e.path, i), "item %d holds a NUL byte, which no process can be given", i+1)
	}
}

// execEnv refuses what the exec handler refuses when consume starts it
// (internal/handler's Exec: an empty name, "environment entry ... is not
// NAME=value") and what would run wrong or not at all: a name holding '='
// (the process would see another variable) or NUL, a value holding NUL (no
// process can be given one). A value is a secret: never shown.
func (d *decoder) execEnv(e entry, env map[string]string) {
	if env == nil {
		return // not a mapping: reported as such
	}
	ents, ok := d.mapEntries(e.val, e.path, nil)
	if !ok {
		return
	}
	for _, ve := range ents {
		v, ok := env[ve.key]
		switch {
		case ve.key == "" || strings.ContainsAny(ve.key, "=\x00"):
			d.errorf(ve.keyN, ve.path, "environment variable name %s is not valid: it must be non-empty and hold no '=' or NUL byte", redact.Quote(ve.key))
		case ok && strings.IndexByte(v, 0) >= 0:
			d.errorf(ve.keyN, ve.path, "environment variable %s: its value holds a NUL byte, which no process can be given", redact.Quote(ve.key))
		}
	}
}

// resolveCommand makes an exec command given as a relative path (one with a
// slash, like ./handler.sh) relative to the config file's directory, as
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

func (d *decoder) handler(he entry, h *Handler) {
	setDefaults(h, handlerTable)
	ents, ok := d.mapEntries(he.val, he.path, allHandlerFields)
	if !ok {
		return
	}
	typ := lookup(handlerTable, "type")
	te, ok := findEntry(ents, "type")
	if !ok {
		typ.missingAt(d, d.posOf(he.keyN), he.path+".type")
		return
	}
	if !typ.read(d, te, h) {
		return
	}
	t := string(h.Type)
	allowed := handlerFields[h.Type]
	for _, e := range ents {
		if !slices.Contains(allowed, e.key) {
			d.errorf(e.keyN, e.path, "field %q does not belong to a %s handler; %s handlers take %s", e.key, t, t, strings.Join(allowed, ", "))
			continue
		}
		if e.key == "type" {
			continue
		}
		decodeFields(d, []entry{e}, h, handlerTable, func(e entry) { // tls
			h.TLS = &TLS{}
			decodeFields(d, d.entriesOf(e, tlsFields), h.TLS, tlsTable, nil)
			if (h.TLS.CertFile == "") != (h.TLS.KeyFile == "") {
				d.errorf(e.keyN, e.path, "certFile and keyFile go together; set both or neither")
			}
		})
	}
	switch h.Type {
	case HandlerBuiltin:
		_, hasName := findEntry(ents, "name")
		se, hasScript := findEntry(ents, "script")
		switch {
		case hasName && hasScript:
			d.errorf(se.keyN, se.path, "name and script are mutually exclusive; set one")
		case !hasName && !hasScript:
			d.errorf(he.keyN, he.path+".name", "required field is missing; a builtin handler needs name (%s) or script", strings.Join(builtinNames, ", "))
		}
	case HandlerExec:
		if _, ok := findEntry(ents, "command"); !ok {
			d.errorf(he.keyN, he.path+".command", "required field is missing; an exec handler needs the command to run")
		}
	case HandlerHTTP:
		if _, ok := findEntry(ents, "url"); !ok {
			d.errorf(he.keyN, he.path+".url", "required field is missing; an http handler needs the url to POST to")
		}
	}
}

// script reads a builtin script: "defer,defer,ack" or a list of outcomes.
func (d *decoder) script(e entry) []string {
	var items []string
	list := false
	if n := d.resolve(e.val, e.path); n != nil && n.Kind == yaml.SequenceNode {
		items, list = d.strList(e), true
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
		// An item that came out of ${VAR} expansion is not shown, nor
		// is a suggestion made from it: a script's variable is a secret
		// (secretField).
		from := e.path
		if list {
			from = fmt.Sprintf("%s[%d]", e.path, i)
		}
		if raw, ok := d.raw[from]; ok {
			d.errorf(e.val, e.path, "item %d of the value of %q (not shown: environment values may be secrets) is not a builtin outcome; valid values are %s", i+1, raw, strings.Join(builtinNames, ", "))
			return nil
		}
		d.errorf(e.val, e.path, "item %d %q is not a builtin outcome%s; valid values are %s", i+1, it, suggestion(it, builtinNames), strings.Join(builtinNames, ", "))
		return nil
	}
	return out
}
