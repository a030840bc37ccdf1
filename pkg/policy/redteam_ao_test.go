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

// TestSettingsWritersAreWrites: a sub-command that persists settings for
// every later command writes a file the write rules judge (npm 9: npm
// config set registry URL wrote ~/.npmrc; pip 23: pip config set wrote
// ~/.config/pip/pip.conf) — under a rule for the verb it asks, as a write
// outside the workspace, where before it passed; the verbs that read pass.
func TestSettingsWritersAreWrites(t *testing.T) {
	p := mustParsePolicy(t, "settings.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(npm config *)", action: allow }
  - { rule: "@shell(npm set *)", action: allow }
  - { rule: "@shell(pnpm config *)", action: allow }
  - { rule: "@shell(yarn config *)", action: allow }
  - { rule: "@shell(pip config *)", action: allow }
  - { rule: "@shell(helm repo *)", action: allow }
  - { rule: "@shell(docker context *)", action: allow }
  - { rule: "@shell(poetry config *)", action: allow }
  - { rule: "@shell(bundle config *)", action: allow }
  - { rule: "@shell(npm pkg *)", action: allow }
  - { rule: "@write(package.json)", action: ask }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`npm config set script-shell /tmp/x`, policy.Ask},
		{`npm config --location=project set registry http://x`, policy.Ask},
		{`npm config set -g registry http://x`, policy.Ask},
		{`npm set registry http://x`, policy.Ask},
		{`npm config $VERB registry http://x`, policy.Ask},
		{`pnpm config set registry http://x`, policy.Ask},
		{`yarn config set npmRegistryServer http://x`, policy.Ask},
		{`pip config set global.index-url http://x`, policy.Ask},
		{`helm repo add charts http://x`, policy.Ask},
		{`docker context create x --docker host=tcp://x:2375`, policy.Ask},
		{`poetry config repositories.x http://x`, policy.Ask},
		{`poetry config --unset repositories.x`, policy.Ask},
		{`bundle config set mirror.https://rubygems.org http://x`, policy.Ask},
		{`bundle config path vendor`, policy.Ask},
		{`npm pkg set scripts.test=/tmp/x`, policy.Ask},
		{`npm config get registry`, policy.Allow},
		{`npm config list`, policy.Allow},
		{`pip config list`, policy.Allow},
		{`helm repo list`, policy.Allow},
		{`poetry config --list`, policy.Allow},
		{`poetry config virtualenvs.in-project`, policy.Allow},
		{`bundle config get path`, policy.Allow},
		{`npm pkg get name`, policy.Allow},
	})
}
