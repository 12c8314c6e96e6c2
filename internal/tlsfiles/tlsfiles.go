// Package tlsfiles loads a TLS client configuration from PEM files: the
// http handler's handler.tls (CA certificates trusted besides the system's,
// a client certificate and key for mutual TLS). The handler builds its
// client with it, and lint checks with it that consume could load the
// files, so the two cannot disagree.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// Files names the PEM files of a TLS client: paths as given (a relative
// one is relative to the working directory; internal/config resolves the
// subscriptions file's against its directory first).
type Files struct {
	// CAFile is a PEM file of CA certificates trusted in addition to the
	// system pool; "" for the system pool alone.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key for
	// mutual TLS; give both or neither.
	CertFile string
	KeyFile  string
	// InsecureSkipVerify turns off server certificate verification (tests
	// and demos only).
	InsecureSkipVerify bool
}

// ClientConfig reads f's files and returns the TLS client configuration
// (TLS 1.2 at least). Its errors name the file: "tls ca file: ..." (not
// readable), "tls ca file PATH: no PEM certificates found",
// "tls: certFile and keyFile must be given together", "tls client
// certificate: ..." (not readable, or not a pair).
func (f Files) ClientConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.InsecureSkipVerify} //nolint:gosec // opt-in for tests and demos
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca file %s: no PEM certificates found", f.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, errors.New("tls: certFile and keyFile must be given together")
	}
	if f.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
