package admincli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/admincli"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/replay"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// `signoff admin replay` reaches internal/replay with the connection flags
// of every admin command: a candidate that turns an allow into a deny names
// the earlier allowed call, and exits "changes".
func TestAdminReplayNamesTheAllowedCallACandidateDenies(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	c := p.Agent("sess-replay", "a1")
	d, err := c.Request(t.Context(), client.Call{RequestID: "req-replay-ls", Tool: "bash", Arguments: brokertest.Bash("ls -la")})
	if err != nil || d.Outcome != messages.OutcomeAllow {
		t.Fatalf("ls -la under the live policy: %+v, %v; want allowed", d, err)
	}
	cand := filepath.Join(t.TempDir(), "candidate.yaml")
	if err := os.WriteFile(cand, []byte("rules:\n  - { rule: \"bash(ls *)\", action: deny }\nteams:\n  default: { members: [alice] }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs string
	code := -1
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if out, errs, code = admin(t, p, "replay", "--policy", cand, "--since", "1h", "--json"); code == replay.ExitChanges {
			break
		}
	}
	if code != replay.ExitChanges || !strings.Contains(out, "req-replay-ls") || !strings.Contains(out, `"deny"`) {
		t.Fatalf("signoff admin replay: exit %d, stdout %q, stderr %q; want exit %d naming req-replay-ls allow→deny", code, out, errs, replay.ExitChanges)
	}
	if _, _, code := admin(t, p, "replay", "--since", "1h"); code != admincli.ExitUsage {
		t.Fatalf("replay without --policy: exit %d, want %d", code, admincli.ExitUsage)
	}
}
