// Package kubernetes holds the Kubernetes manifests of a Signoff deployment
// (the YAML files next to this one: namespace, policy ConfigMap, Secrets,
// the broker Deployment with its Service, PodDisruptionBudget and
// HorizontalPodAutoscaler, the approver bot, an example Ingress) and the
// test that decodes every document strictly into its Kubernetes API type and
// checks the invariants the deployment relies on. It has no code of its
// own; docs/OPERATIONS.md explains the manifests.
package kubernetes
