package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/api/cloudresourcemanager/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The IAM helpers of R-20 and the RPCs they make, as named in the Warning.
const (
	HelperDeadLetterPublisher = "ensureDeadLetterPublisherBinding"
	HelperSubscriber          = "ensureSubscriptionSubscriberBinding"
	RPCGetProject             = "cloudresourcemanager.projects.get"
	RPCNewProjectsClient      = "cloudresourcemanager.NewService"
	RPCGetIamPolicy           = "google.iam.v1.IAMPolicy/GetIamPolicy"
	RPCSetIamPolicy           = "google.iam.v1.IAMPolicy/SetIamPolicy"
)

// ClientConstructionError is the ONE non-status failure R-20 tolerates: the
// Resource Manager client could not be constructed (credentials did not
// resolve), so no RPC was issued and there is no status code to inspect.
type ClientConstructionError struct{ Err error }

// Error implements error.
func (e *ClientConstructionError) Error() string {
	return "construct Resource Manager client: " + e.Err.Error()
}

// Unwrap returns the construction error.
func (e *ClientConstructionError) Unwrap() error { return e.Err }

// ProjectNumberFunc returns the project number of project (Resource
// Manager's GetProject). A failure to construct its client must be returned
// as a *ClientConstructionError.
type ProjectNumberFunc func(ctx context.Context, project string) (string, error)

// ResourceManagerProjectNumber is the default ProjectNumberFunc: Cloud
// Resource Manager v1 projects.get with Application Default Credentials.
// PUBSUB_EMULATOR_HOST does not redirect it: it is never called on the
// emulator (ChannelOptions.OnEmulator).
func ResourceManagerProjectNumber(ctx context.Context, project string) (string, error) {
	svc, err := cloudresourcemanager.NewService(ctx)
	if err != nil {
		return "", &ClientConstructionError{Err: err}
	}
	p, err := svc.Projects.Get(project).Context(ctx).Do()
	if err != nil {
		return "", fmt.Errorf("get project %s: %w", project, err)
	}
	return strconv.FormatInt(p.ProjectNumber, 10), nil
}

// ensureBinding is one IAM helper of R-20: derive the member (the service
// agent from the project number unless member is set), read the resource's
// policy, add the role binding if missing, write it back. A tolerated
// failure (see toleratedIAM) abandons the rest of the helper with ONE
// Warning; every other failure is returned.
func (c *Channels) ensureBinding(ctx context.Context, helper, member, role, resource string, onTopic bool) error {
	if c.opts.OnEmulator {
		return c.skipOnEmulator(ctx, helper, member, resource, c.bindingHint(member, role, resource, onTopic))
	}
	// The hint names the member as far as it is known when the call fails.
	tolerate := func(rpc, called string, err error) error {
		return c.tolerate(ctx, helper, rpc, called, err, c.bindingHint(member, role, resource, onTopic)...)
	}
	if member == "" {
		num, err := c.opts.ProjectNumber(ctx, c.client.Project())
		if err != nil {
			rpc := RPCGetProject
			var ce *ClientConstructionError
			if errors.As(err, &ce) {
				rpc = RPCNewProjectsClient
			}
			return tolerate(rpc, "projects/"+c.client.Project(), err)
		}
		member = "serviceAccount:service-" + num + "@gcp-sa-pubsub.iam.gserviceaccount.com"
	}
	get := c.client.SubscriptionAdminClient.GetIamPolicy
	set := c.client.SubscriptionAdminClient.SetIamPolicy
	if onTopic {
		get, set = c.client.TopicAdminClient.GetIamPolicy, c.client.TopicAdminClient.SetIamPolicy
	}
	policy, err := get(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
	if err != nil {
		return tolerate(RPCGetIamPolicy, resource, err)
	}
	for _, b := range policy.Bindings {
		if b.Role == role && slices.Contains(b.Members, member) {
			return nil
		}
	}
	policy.Bindings = append(policy.Bindings, &iampb.Binding{Role: role, Members: []string{member}})
	if _, err := set(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: policy}); err != nil {
		return tolerate(RPCSetIamPolicy, resource, err)
	}
	return nil
}

// bindingHint is what R-20's Warning for one binding adds to its five
// elements, as slog attributes: the role, and on the emulator
// note=NoteIAMOnEmulator, else fix= the gcloud command that makes the
// binding on a real project (the member the service agent's address with
// PROJECT_NUMBER when none is set: deriving it is what may have failed).
func (c *Channels) bindingHint(member, role, resource string, onTopic bool) []any {
	if c.opts.OnEmulator {
		return []any{"role", role, "note", NoteIAMOnEmulator}
	}
	if member == "" {
		member = "serviceAccount:service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com"
	}
	kind := "subscriptions"
	if onTopic {
		kind = "topics"
	}
	fix := fmt.Sprintf("grant it yourself, or let these credentials set IAM policies (roles/pubsub.admin): gcloud pubsub %s add-iam-policy-binding %s --project %s --member %s --role %s",
		kind, lastSegment(resource), c.client.Project(), member, role)
	return []any{"role", role, "fix", fix}
}

// skipOnEmulator is ensureBinding on Google's emulator: no call at all.
// The emulator has no IAM service, and the project-number look-up of a
// binding without a member goes to Cloud Resource Manager, Google's real
// service, which the emulator's settings do not redirect: with
// Application Default Credentials on the machine it would be a real API
// call about the emulator's project. It logs R-20's Warning as a
// tolerated failure does, naming the call it did not make, with
// status=StatusSkippedOnEmulator, the hint (note=NoteIAMOnEmulator) and no
// error.
func (c *Channels) skipOnEmulator(ctx context.Context, helper, member, resource string, hint []any) error {
	rpc := RPCGetIamPolicy
	if member == "" {
		rpc, resource = RPCGetProject, "projects/"+c.client.Project()
	}
	attrs := append([]any{"helper", helper, "rpc", rpc, "resource", resource,
		"status", StatusSkippedOnEmulator, "consequence", ConsequenceDeadLetteringInactive}, hint...)
	c.log.WarnContext(ctx, LogIAMTolerated, attrs...)
	return nil
}

// tolerate applies R-20's filter to err: a tolerated failure logs one
// Warning with the five elements (and hint, bindingHint's attributes) and
// returns nil; anything else is returned wrapped with the helper, RPC and
// resource.
func (c *Channels) tolerate(ctx context.Context, helper, rpc, resource string, err error, hint ...any) error {
	code, ok := toleratedIAM(err)
	if !ok {
		return fmt.Errorf("%s: %s on %s: %w", helper, rpc, resource, err)
	}
	attrs := append([]any{"helper", helper, "rpc", rpc, "resource", resource,
		"status", code, "consequence", ConsequenceDeadLetteringInactive}, hint...)
	c.log.WarnContext(ctx, LogIAMTolerated, append(attrs, "error", err)...)
	return nil
}

// toleratedIAM is R-20's status filter, exactly: Unimplemented,
// PermissionDenied and Unauthenticated (from a gRPC status, or the HTTP
// 501/403/401 of a REST call), and a *ClientConstructionError (reported as
// "ClientConstruction"). It reports the status name and true for those, and
// false for every other error (NotFound, InvalidArgument, DeadlineExceeded,
// ResourceExhausted, a context error, ...).
func toleratedIAM(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	var ce *ClientConstructionError
	if errors.As(err, &ce) {
		return "ClientConstruction", true
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		switch gerr.Code {
		case http.StatusNotImplemented:
			return codes.Unimplemented.String(), true
		case http.StatusForbidden:
			return codes.PermissionDenied.String(), true
		case http.StatusUnauthorized:
			return codes.Unauthenticated.String(), true
		}
		return "", false
	}
	s, ok := status.FromError(err)
	if !ok {
		return "", false
	}
	switch s.Code() {
	case codes.Unimplemented, codes.PermissionDenied, codes.Unauthenticated:
		return s.Code().String(), true
	}
	return "", false
}
