package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestKubectlConfigSetChangesOnlyChoosingFields: kubectl config set
// PROPERTY VALUE writes any field of the kubeconfig (kubectl 1.37: config
// set clusters.c.server https://evil… and then kubectl get pods sent the
// context's token there), so under a rule allowing kubectl config * it
// passes only for the fields that choose among what the kubeconfig holds.
// So does set-cluster --certificate-authority, which trusts another CA.
func TestKubectlConfigSetChangesOnlyChoosingFields(t *testing.T) {
	p := mustParsePolicy(t, "kubectl.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(kubectl get *)", action: allow }
  - { rule: "@shell(kubectl config *)", action: allow }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`kubectl config set clusters.prod.server https://evil.example:6443`, policy.Ask},
		{`kubectl config set clusters.prod.proxy-url http://evil.example:3128`, policy.Ask},
		{`kubectl config set users.ci.exec.command /tmp/x`, policy.Ask},
		{`kubectl config set contexts.dev.cluster.server x`, policy.Ask},
		{`kubectl config set contexts.a.b.namespace x`, policy.Ask},
		{`kubectl config set --set-raw-bytes=true clusters.prod.certificate-authority-data eA==`, policy.Ask},
		// An option among the words would make its value look like the
		// property.
		{`kubectl config set --namespace current-context users.ci.token x`, policy.Ask},
		{`kubectl config set $P v`, policy.Ask},
		{`kubectl config unset users.ci`, policy.Ask},
		{`kubectl config set-cluster prod --certificate-authority=ca.pem`, policy.Ask},
		{`kubectl config set current-context prod`, policy.Allow},
		{`kubectl config set contexts.dev.namespace payments`, policy.Allow},
		{`kubectl config unset contexts.old`, policy.Allow},
		{`kubectl config set-context dev --namespace=payments`, policy.Allow},
		{`kubectl config view`, policy.Allow},
	})
}
