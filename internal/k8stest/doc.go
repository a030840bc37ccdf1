// Package k8stest holds the checks of Kubernetes objects that both the
// plain manifests' tests (deploy/kubernetes) and the Helm chart's tests
// (deploy/helm, its own module, which reaches this package through its
// replace of the main module) make: [EgressAllows] evaluates network
// policies the way the NetworkPolicy rules do.
package k8stest
