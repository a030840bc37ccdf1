package terminal_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// grantIDs lists the ids of a session's grants, as the brokers keep them.
func grantIDs(t *testing.T, p *brokertest.Plane, session string) []string {
	t.Helper()
	data, _ := json.Marshal(messages.AdminRequest{V: messages.Version, SessionID: session})
	var rep messages.AdminReply
	raw := p.RawRequest(p.Subjects.Admin(messages.AdminOpListGrants), data)
	if err := json.Unmarshal(raw, &rep); err != nil || !rep.OK {
		t.Fatalf("list grants: %s", raw)
	}
	var ids []string
	for _, g := range rep.Grants {
		ids = append(ids, g.ID)
	}
	return ids
}

func TestTerminalListsAndRevokesGrants(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	ctx := context.Background()
	agent := p.Agent("sess-g", "agent-1")
	req := pending(t, p, agent, "default", "req-g-1", "npm install left-pad")
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})

	// The prompt says what s grants; s grants exactly that.
	tp.out.expect("[s] session: 1 bash pattern (above)")
	tp.out.expect("› ")
	tp.typeKeys(t, "s")
	brokertest.WantDecision(t, req.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	tp.out.expect(`✓ bash npm install left-pad approved (session: 1 bash pattern for agent agent-1 in session sess-g: "bash(npm install left-pad)")`)
	ids := grantIDs(t, p, "sess-g")
	if len(ids) != 1 {
		t.Fatalf("grants of sess-g: %v", ids)
	}

	// g lists it with no question waiting.
	tp.typeKeys(t, "g")
	list := tp.out.expect("ends with the session")
	for _, want := range []string{"Grants of your teams (1)", "1. " + ids[0] + "  bash(npm install left-pad) for agent agent-1 in session sess-g",
		"session · approved by bob via terminal · request req-g-1 · teams default"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}

	// v, an id that is not there, Enter: why is shown.
	tp.typeKeys(t, "v")
	tp.out.expect("revoke grant: its id or its number")
	tp.typeKeys(t, "gr_nothere\r")
	tp.out.expect("grant gr_nothere not revoked: not found: no grant gr_nothere among the grants of the teams bob may answer for")
	// Esc abandons a revocation.
	tp.typeKeys(t, "v1\x1b")
	tp.out.expect("back to the keys; nothing was revoked")
	if got := grantIDs(t, p, "sess-g"); len(got) != 1 {
		t.Fatalf("an abandoned revocation revoked: %v", got)
	}
	// v 1 revokes the first of the list.
	tp.typeKeys(t, "v1\r")
	tp.out.expect("✓ revoked grant " + ids[0] + ": bash(npm install left-pad) for agent agent-1 in session sess-g — the next such call asks again")
	if got := grantIDs(t, p, "sess-g"); len(got) != 0 {
		t.Fatalf("grants after the revocation: %v", got)
	}
	tp.typeKeys(t, "g")
	tp.out.expect("No standing grants for your teams.")

	// The next such call asks again.
	again := brokertest.Ask(ctx, agent, "req-g-2", "bash", brokertest.Bash("npm install left-pad"))
	tp.out.expect("[s] session: 1 bash pattern (above)")
	tp.typeKeys(t, "y")
	brokertest.WantDecision(t, again.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

func TestTerminalRevokesGrantsByIDInLineMode(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	agent := p.Agent("sess-gl", "agent-1")
	req := pending(t, p, agent, "default", "req-gl-1", "npm install left-pad")
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := newScreen(t)
	runBot(t, p, botConfig("bob", "default"), terminal.New(r, out, terminal.Options{Logger: quiet(), Device: "pipe", KeyGuard: -1}))
	out.expect("› ")
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(w, s); err != nil {
			t.Fatal(err)
		}
	}
	write("s\n")
	req.Wait(t)
	ids := grantIDs(t, p, "sess-gl")
	if len(ids) != 1 {
		t.Fatalf("grants: %v", ids)
	}
	write("g\n")
	out.expect("1. " + ids[0])
	write("v " + ids[0] + "\n")
	out.expect("✓ revoked grant " + ids[0])
	write("v " + ids[0] + "\n")
	out.expect("grant " + ids[0] + " not revoked: not found: no grant " + ids[0] + " among")
	write("g extra\n")
	out.expect("g takes nothing after it")
}

func TestTerminalGrantsOfAnotherTeamAreNeitherListedNorRevoked(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	device := p.Approver("default")
	req := brokertest.Ask(context.Background(), p.Agent("sess-gt", "agent-1"), "req-gt-1", "bash", brokertest.Bash("npm install left-pad"))
	if rep := device.Approve(device.NextAsk("req-gt-1"), "alice", messages.ScopeSession); !rep.Applied {
		t.Fatalf("alice's approval: %+v", rep)
	}
	req.Wait(t)
	ids := grantIDs(t, p, "sess-gt")
	if len(ids) != 1 {
		t.Fatalf("grants: %v", ids)
	}
	// dave serves oncall only: default's grant is not his to see or revoke.
	tp, _ := ttyBot(t, p, botConfig("dave", "oncall"), terminal.Options{})
	tp.typeKeys(t, "g")
	tp.out.expect("No standing grants for your teams.")
	tp.typeKeys(t, "v"+ids[0]+"\r")
	tp.out.expect("grant " + ids[0] + " not revoked: not found: no grant " + ids[0] + " among the grants of the teams dave may answer for through this bot (oncall)")
	if got := grantIDs(t, p, "sess-gt"); len(got) != 1 {
		t.Fatalf("dave revoked default's grant: %v", got)
	}
}
