// Package kubernetes holds the Kubernetes manifests of a Signoff deployment
// (the YAML files next to this one: namespace, policy ConfigMap, the broker
// Deployment with its Service, PodDisruptionBudget and
// HorizontalPodAutoscaler, the approver bot, network policies; and, not in
// the kustomization, examples of the Secrets and of the brokers' tenants
// ConfigMap, a ServiceMonitor and an example Ingress) and the test that
// decodes every document strictly into
// its Kubernetes API type and checks the invariants the deployment relies
// on. It has no code of its own; docs/OPERATIONS.md explains the manifests.
// The Helm chart of the same parts is deploy/helm/signoff.
package kubernetes
