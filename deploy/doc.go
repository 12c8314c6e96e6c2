// Package deploy holds what runs brighter where users run it: the
// Kubernetes manifests with KEDA autoscaling (kubernetes/) and, in its
// tests, the proof that they agree with the binary. The manifests are
// decoded strictly into the upstream Kubernetes (k8s.io/api) and KEDA
// (github.com/kedacore/keda/v2/apis/keda/v1alpha1) API types, with no
// network; each overlay is rendered with kustomize's own library (the
// generated, content-hashed ConfigMap that rolls the Deployment on a
// change), and the subscriptions file each overlay carries is linted by the
// brighter binary built from this commit.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces. The package has
// no code of its own that brighter runs.
//
// Imported by: none
package deploy
