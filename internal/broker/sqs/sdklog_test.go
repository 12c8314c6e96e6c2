package sqs

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestSDKWarningIsOneRecordOfTheCommandsLogger: with no credentials and
// an instance metadata service that refuses IMDSv2 tokens, the SDK's
// "falling back to IMDSv1" warning reaches the logger the clients were
// made with as one Warn record with a stable message, not a raw line on
// stderr (which broke --log-format json).
func TestSDKWarningIsOneRecordOfTheCommandsLogger(t *testing.T) {
	var imdsCalls int
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		imdsCalls++
		// 403 to the token PUT (the SDK falls back to IMDSv1 and warns),
		// 404 to the role look-up (no instance role: no credentials).
		if r.Method == http.MethodPut {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		http.NotFound(w, r)
	}))
	defer imds.Close()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED": "false", "AWS_EC2_METADATA_V1_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL,
	} {
		t.Setenv(k, v)
	}
	var out bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	c, err := NewClientsWith(context.Background(), Connection{Region: "us-east-1", Endpoint: endpoint, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CheckCredentials(context.Background(), ""); err == nil {
		t.Fatal("credentials found with none configured")
	}
	if imdsCalls == 0 {
		t.Fatal("the credential chain never asked the instance metadata service")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one record of the SDK's warning, got %d lines:\n%s", len(lines), out.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("the SDK's line is not a JSON record: %v\n%s", err, lines[0])
	}
	if rec["msg"] != SDKLogMessage || rec["level"] != "WARN" || !strings.Contains(rec["sdk_message"].(string), "falling back to IMDSv1") {
		t.Fatalf("record = %v, want msg %q at WARN with the SDK's text", rec, SDKLogMessage)
	}
}

// TestSDKClassificationsMapToLevels: the SDK's WARN is Warn, DEBUG is
// Debug (hidden at the default info level), anything else Info.
func TestSDKClassificationsMapToLevels(t *testing.T) {
	var out bytes.Buffer
	l := newSDKLogger(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Logf("WARN", "w %d", 1)
	l.Logf("DEBUG", "d")
	l.Logf("OTHER", "o")
	var levels []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		levels = append(levels, rec["level"].(string)+" "+rec["sdk_message"].(string))
	}
	if got := strings.Join(levels, ","); got != "WARN w 1,DEBUG d,INFO o" {
		t.Fatalf("levels = %s", got)
	}
	newSDKLogger(nil).Logf("WARN", "dropped") // a nil logger drops the line, without panicking
}
