package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestToleratedIAM_AC21 exercises R-20's status filter directly: NotFound,
// InvalidArgument, DeadlineExceeded, ResourceExhausted (and others) propagate
// unchanged with nothing logged; Unimplemented, PermissionDenied,
// Unauthenticated and a Resource Manager client that cannot be constructed
// are tolerated with ONE Warning carrying the five elements.
func TestToleratedIAM_AC21(t *testing.T) {
	propagate := []error{
		status.Error(codes.NotFound, "x"), status.Error(codes.InvalidArgument, "x"),
		status.Error(codes.DeadlineExceeded, "x"), status.Error(codes.ResourceExhausted, "x"),
		status.Error(codes.Internal, "x"), context.DeadlineExceeded, errors.New("plain"),
		&googleapi.Error{Code: http.StatusNotFound}, &googleapi.Error{Code: http.StatusTooManyRequests},
	}
	tolerate := map[string]error{
		"Unimplemented":      status.Error(codes.Unimplemented, "unknown service google.iam.v1.IAMPolicy"),
		"PermissionDenied":   fmt.Errorf("wrapped: %w", status.Error(codes.PermissionDenied, "x")),
		"Unauthenticated":    status.Error(codes.Unauthenticated, "x"),
		"ClientConstruction": &ClientConstructionError{Err: errors.New("could not find default credentials")},
	}
	tolerate["Unauthenticated (REST 401)"] = &googleapi.Error{Code: http.StatusUnauthorized}
	tolerate["PermissionDenied (REST 403)"] = fmt.Errorf("get project: %w", &googleapi.Error{Code: http.StatusForbidden})
	tolerate["Unimplemented (REST 501)"] = &googleapi.Error{Code: http.StatusNotImplemented}

	for _, err := range propagate {
		rec := &recorder{}
		c := &Channels{log: slog.New(rec)}
		got := c.tolerate(context.Background(), HelperSubscriber, RPCGetIamPolicy, "projects/p/subscriptions/s", err)
		if !errors.Is(got, err) {
			t.Errorf("%v: returned %v, want it wrapped unchanged", err, got)
		}
		if n := len(rec.records); n != 0 {
			t.Errorf("%v: %d records logged, want 0", err, n)
		}
	}
	for name, err := range tolerate {
		rec := &recorder{}
		c := &Channels{log: slog.New(rec)}
		if got := c.tolerate(context.Background(), HelperDeadLetterPublisher, RPCGetProject, "projects/p", err); got != nil {
			t.Errorf("%s: returned %v, want nil (tolerated)", name, got)
		}
		ws := rec.find(slog.LevelWarn, LogIAMTolerated)
		if len(ws) != 1 || len(rec.records) != 1 {
			t.Fatalf("%s: %d warnings of %d records, want exactly 1", name, len(ws), len(rec.records))
		}
		w := ws[0]
		wantStatus := strings.Fields(name)[0]
		if attr(w, "helper") != HelperDeadLetterPublisher || attr(w, "rpc") != RPCGetProject || attr(w, "resource") != "projects/p" ||
			attr(w, "status") != wantStatus || attr(w, "consequence") != ConsequenceDeadLetteringInactive {
			t.Errorf("%s: warning lacks R-20's five elements: %s", name, recordText(w))
		}
	}
}
