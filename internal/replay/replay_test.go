package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/replay"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// recorded is a dev plane (embedded NATS, real redis-server) whose audit
// stream holds four decisions of session s1: r-ls allowed by the rule
// bash(ls *), r-git asked and approved for the session, r-git2 allowed by
// that session grant, r-rm denied by a rule.
type recorded struct {
	plane *brokertest.Plane
	grant string // the grant r-git2 used
}

func recordDecisions(t *testing.T) recorded {
	t.Helper()
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	ctx := t.Context()
	agent := p.Agent("s1", "a1")
	appr := p.Approver("default")

	brokertest.WantDecision(t, brokertest.Ask(ctx, agent, "r-ls", "bash", brokertest.Bash("ls -la")).Wait(t),
		messages.OutcomeAllow, messages.ReasonPolicyAllow)
	git := brokertest.Ask(ctx, agent, "r-git", "bash", brokertest.Bash("git status"))
	appr.Approve(appr.NextAsk("r-git"), "alice", messages.ScopeSession)
	brokertest.WantDecision(t, git.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	d := brokertest.Ask(ctx, agent, "r-git2", "bash", brokertest.Bash("git status")).Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonScopeGrant)
	brokertest.WantDecision(t, brokertest.Ask(ctx, agent, "r-rm", "bash", brokertest.Bash("rm -rf /tmp/x")).Wait(t),
		messages.OutcomeDeny, messages.ReasonPolicyDeny)
	waitAuditDecisions(t, p, 4)
	return recorded{plane: p, grant: d.DecidedBy.ID}
}

// waitAuditDecisions waits until the audit stream holds n decision records
// (the brokers append them after replying).
func waitAuditDecisions(t *testing.T, p *brokertest.Plane, n int) {
	t.Helper()
	js, err := jetstream.New(p.NATS.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		s, err := js.Stream(t.Context(), messages.AuditStream)
		if err == nil {
			var decisions int
			for seq := uint64(1); seq <= s.CachedInfo().State.LastSeq; seq++ {
				if m, err := s.GetMsg(t.Context(), seq); err == nil {
					recs, err := messages.AuditRecords(m.Data)
					if err != nil {
						t.Fatalf("audit message %d: %v", seq, err)
					}
					decisions += len(recs)
				}
			}
			if decisions >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit stream did not get %d decision records in 10 s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func writePolicy(t *testing.T, yaml string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "candidate.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func run(t *testing.T, p *brokertest.Plane, fn func(context.Context, replay.Env, []string) int, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := fn(t.Context(), replay.Env{NC: p.NATS.Connect(t), Stdout: &out, Stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

func changeOf(rep replay.Report, id string) *replay.Change {
	for i := range rep.Changes {
		if rep.Changes[i].RequestID == id {
			return &rep.Changes[i]
		}
	}
	return nil
}

// candidateDenyingLsAndGit turns the live policy's allow of ls into a deny,
// and denies git, which the live policy asks about.
const candidateDenyingLsAndGit = `
mode: auto-edit
rules:
  - { rule: "bash(ls)", action: allow }
  - { rule: "bash(ls *)", action: deny }
  - { rule: "bash(git *)", action: deny }
  - { rule: "bash(rm -rf /*)", action: deny }
  - { rule: "read_file(**/.env)", action: deny }
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
teams:
  default: { members: [alice, bob, carol] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
`

func TestReplayNamesTheEarlierAllowedCallThatARuleTurnedToDeny(t *testing.T) {
	rec := recordDecisions(t)
	code, out, errOut := run(t, rec.plane, replay.Replay, "--policy", writePolicy(t, candidateDenyingLsAndGit), "--json")
	if code != replay.ExitChanges {
		t.Fatalf("exit %d, want %d (changes); stderr: %s", code, replay.ExitChanges, errOut)
	}
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	ls := changeOf(rep, "r-ls")
	if ls == nil || ls.From != "allow" || ls.To != "deny" || !strings.Contains(ls.Rule, "ls *") || ls.Tool != "bash" || ls.SessionID != "s1" {
		t.Fatalf("r-ls: got %+v, want allow→deny by the rule bash(ls *)\n%s", ls, out)
	}
	git := changeOf(rep, "r-git")
	if git == nil || git.From != "ask" || git.To != "deny" || git.ReasonCode != messages.ReasonApproved {
		t.Errorf("r-git (approved by a human): got %+v, want ask→deny", git)
	}
	git2 := changeOf(rep, "r-git2")
	if git2 == nil || git2.From != "allow" || git2.To != "deny" || git2.GrantLost != rec.grant || rec.grant == "" {
		t.Errorf("r-git2 (allowed by grant %s): got %+v, want allow→deny naming the lost grant", rec.grant, git2)
	}
	if c := changeOf(rep, "r-rm"); c != nil {
		t.Errorf("r-rm is denied by both policies, but reported changed: %+v", c)
	}
	if rep.Totals["allow→deny"] != 2 || rep.Totals["ask→deny"] != 1 || rep.GrantsLost != 1 || rep.Replayed != 4 || rep.Unchanged != 1 {
		t.Errorf("totals %v, grants lost %d, replayed %d, unchanged %d; want allow→deny 2, ask→deny 1, 1 lost, 4 replayed, 1 unchanged",
			rep.Totals, rep.GrantsLost, rep.Replayed, rep.Unchanged)
	}

	code, table, _ := run(t, rec.plane, replay.Replay, "--policy", writePolicy(t, candidateDenyingLsAndGit))
	if code != replay.ExitChanges || !strings.Contains(table, "r-ls") || !strings.Contains(table, "allow→deny") ||
		!strings.Contains(table, "grant "+rec.grant+" no longer applies") {
		t.Errorf("table (exit %d) does not name r-ls, its change and the lost grant:\n%s", code, table)
	}
}

func TestReplayKeepsAGrantThatStillSettlesTheCandidatesQuestion(t *testing.T) {
	rec := recordDecisions(t)
	// Only ls changes: git still asks, so the session grant still allows
	// r-git2.
	cand := strings.Replace(brokertest.DefaultPolicy, `"bash(ls *)", action: allow`, `"bash(ls *)", action: ask`, 1)
	code, out, errOut := run(t, rec.plane, replay.Replay, "--policy", writePolicy(t, cand), "--json")
	if code != replay.ExitChanges {
		t.Fatalf("exit %d, want %d; stderr %s", code, replay.ExitChanges, errOut)
	}
	var rep replay.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].RequestID != "r-ls" || rep.Changes[0].Key() != "allow→ask" || rep.GrantsLost != 0 {
		t.Fatalf("want only r-ls allow→ask, got %+v", rep.Changes)
	}
}

func TestReplayOfTheLivePolicyChangesNothingAndExitsZero(t *testing.T) {
	rec := recordDecisions(t)
	code, out, errOut := run(t, rec.plane, replay.Replay, "--policy", writePolicy(t, brokertest.DefaultPolicy), "--since", "1h")
	if code != replay.ExitOK {
		t.Fatalf("exit %d, want 0; stderr %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "4 decisions replayed, 4 unchanged, 0 would change") {
		t.Errorf("summary missing:\n%s", out)
	}
}

func TestReplaySinceLeavesOutOlderDecisions(t *testing.T) {
	rec := recordDecisions(t)
	future := time.Now().Add(time.Second)
	time.Sleep(1100 * time.Millisecond)
	code, out, errOut := run(t, rec.plane, replay.Replay, "--policy", writePolicy(t, candidateDenyingLsAndGit),
		"--since", future.UTC().Format(time.RFC3339Nano), "--json")
	if code != replay.ExitOK {
		t.Fatalf("exit %d, want 0 (nothing recorded since); stderr %s\n%s", code, errOut, out)
	}
}

func TestReplayRefusesBadInputAndReadsNothing(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{NoBroker: true})
	bad := writePolicy(t, "mode: auto-edit\nrules:\n  - { rule: \"bash(ls\", action: allow }\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no policy", []string{"--json"}, "--policy FILE is required"},
		{"a policy that does not parse", []string{"--policy", bad}, "candidate.yaml:3"},
		{"a missing policy file", []string{"--policy", "/nonexistent/p.yaml"}, "/nonexistent/p.yaml"},
		{"since in days that is no number", []string{"--policy", bad, "--since", "xd"}, "--since"},
		{"since in the future", []string{"--policy", bad, "--since", "2999-01-01T00:00:00Z"}, "future"},
		{"a stray argument", []string{"--policy", bad, "extra"}, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, p, replay.Replay, c.args...)
			if code != replay.ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, c.want)
			}
		})
	}
}

func TestReplayWithoutAnAuditStreamSaysSoAndExitsUnavailable(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{NoBroker: true})
	code, _, errOut := run(t, p, replay.Replay, "--policy", writePolicy(t, brokertest.DefaultPolicy))
	if code != replay.ExitUnavailable || !strings.Contains(errOut, "no audit stream") {
		t.Fatalf("exit %d, stderr %q; want 3 and no audit stream", code, errOut)
	}
}

func TestReplayJudgesUnderTheModeOverrideTheRecordCarries(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	rep := p.RawRequest(p.Subjects.Admin(messages.AdminOpSetMode), []byte(`{"v":1,"session_id":"s2","mode":"yolo"}`))
	if !bytes.Contains(rep, []byte(`"ok":true`)) {
		t.Fatalf("set_mode: %s", rep)
	}
	agent := p.Agent("s2", "a2")
	var d *messages.Decision
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		// Each try is a new request: the override reaches the replica
		// through the key-value watch.
		id := "r-yolo-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		call := brokertest.Ask(t.Context(), agent, id, "bash", brokertest.Bash("make build"))
		time.Sleep(200 * time.Millisecond)
		if d, _ = call.Peek(); d != nil && d.ReasonCode == messages.ReasonModeAllow {
			break
		}
		_, _ = agent.Cancel(t.Context(), id)
		call.Wait(t)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonModeAllow)
	if got := p.LastAudit("s2"); got.Mode != "yolo" || got.Decision.RequestID != d.RequestID {
		t.Fatalf("audit record of %s carries mode %q, want yolo", got.Decision.RequestID, got.Mode)
	}
	// Under its recorded mode the live policy allows it again; judged in
	// the policy's own auto-edit mode it would ask.
	code, out, errOut := run(t, p, replay.Replay, "--policy", writePolicy(t, brokertest.DefaultPolicy), "--json")
	var r replay.Report
	_ = json.Unmarshal([]byte(out), &r)
	if c := changeOf(r, d.RequestID); c != nil || code == replay.ExitUsage || code == replay.ExitUnavailable {
		t.Fatalf("exit %d, change %+v, stderr %s: the yolo allow must replay unchanged", code, c, errOut)
	}
}
