package admincli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/admincli"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func writePolicy(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "candidate.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestCanarySetStatusAndClearFromTheCommand(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	file := writePolicy(t, strings.ReplaceAll(brokertest.DefaultPolicy, "action: allow", "action: deny"))
	out, errs, code := admin(t, p, "canary", "set", file, "--share", "10%", "--agent-type", "reviewer",
		"--max-ask-rate", "0.3", "--max-deny-rate", "0.1", "--min-requests", "20", "--window", "5m")
	if code != admincli.ExitOK || !strings.Contains(out, "set on every replica") {
		t.Fatalf("canary set: exit %d, %q, stderr %q", code, out, errs)
	}
	st := adminJSON[messages.CanaryStatus](t, p, "canary", "status")
	c := st.Canary
	if c == nil || c.State != messages.CanaryActive || c.Spec.SharePercent != 10 || c.Spec.Selector == nil || c.Spec.Selector.AgentType != "reviewer" ||
		c.Spec.MaxAskRate != 0.3 || c.Spec.MaxDenyRate != 0.1 || c.Spec.MinRequests != 20 || c.Spec.Window() != 5*time.Minute || st.Counts == nil {
		t.Fatalf("canary status %+v (canary %+v), want the canary just set with its counts", st, c)
	}
	if out, _, code := admin(t, p, "canary", "status"); code != admincli.ExitOK || !strings.Contains(out, c.ID) || !strings.Contains(out, "active") {
		t.Errorf("canary status table: exit %d, %q", code, out)
	}
	if _, errs, code := admin(t, p, "canary", "clear"); code != admincli.ExitOK {
		t.Fatalf("canary clear: exit %d, %q", code, errs)
	}
	waitFor(t, func() bool { return adminJSON[messages.CanaryStatus](t, p, "canary", "status").Canary == nil }, "the canary cleared")
}

func TestCanarySetRefusesBadInputBeforeSendingAnything(t *testing.T) {
	good := writePolicy(t, brokertest.DefaultPolicy)
	bad := writePolicy(t, "rules:\n  - { rule: \"bash(ls)\", action: maybe }\n")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no file":          {[]string{"--share", "10%", "--max-ask-rate", "0.3", "--max-deny-rate", "0.1"}, "FILE"},
		"no bounds":        {[]string{good, "--share", "10%"}, "--max-ask-rate"},
		"no selector":      {[]string{good, "--max-ask-rate", "0.3", "--max-deny-rate", "0.1"}, "--share"},
		"bad share":        {[]string{good, "--share", "ten", "--max-ask-rate", "0.3", "--max-deny-rate", "0.1"}, "--share"},
		"share above 100":  {[]string{good, "--share", "150%", "--max-ask-rate", "0.3", "--max-deny-rate", "0.1"}, "share_percent"},
		"rate above 1":     {[]string{good, "--share", "10%", "--max-ask-rate", "3", "--max-deny-rate", "0.1"}, "max_ask_rate"},
		"bad policy":       {[]string{bad, "--share", "10%", "--max-ask-rate", "0.3", "--max-deny-rate", "0.1"}, "candidate.yaml:2"},
		"unknown subcomnd": {nil, "unknown subcommand"},
	} {
		args := append([]string{"canary", "set"}, c.args...)
		if c.args == nil {
			args = []string{"canary", "start"}
		}
		var out, errw strings.Builder
		code := admincli.Run(t.Context(), append(args, "--nats", "nats://127.0.0.1:1"), &out, &errw)
		if code != admincli.ExitUsage || !strings.Contains(errw.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want usage (2) naming %q", name, code, errw.String(), c.want)
		}
	}
}
