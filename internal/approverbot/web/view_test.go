package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestResolutionText(t *testing.T) {
	alice := messages.Decider{Kind: messages.DeciderApprover, ID: "alice", Display: "Alice", Channel: "slack"}
	tests := []struct {
		name string
		r    messages.Resolved
		want string
	}{
		{"an approval names scope, approver and channel",
			messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{ReasonCode: messages.ReasonApproved, Scope: messages.ScopeSession, DecidedBy: alice}},
			"Approved (session) by Alice via slack"},
		{"an always_prefix approval reads as always",
			messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{ReasonCode: messages.ReasonApproved, Scope: messages.ScopeAlwaysPrefix, DecidedBy: alice}},
			"Approved (always) by Alice via slack"},
		{"an approver without a display name is named by id",
			messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{ReasonCode: messages.ReasonApproved, DecidedBy: messages.Decider{ID: "bob"}}},
			"Approved (once) by bob"},
		{"a soft reject quotes the feedback",
			messages.Resolved{State: messages.StateRejected, Decision: messages.Decision{ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectSoft, Feedback: "use yarn", DecidedBy: alice}},
			`Rejected (skip) by Alice via slack: "use yarn"`},
		{"a reject without a mode is a hard reject",
			messages.Resolved{State: messages.StateRejected, Decision: messages.Decision{ReasonCode: messages.ReasonRejected, DecidedBy: alice}},
			"Rejected & stopped by Alice via slack"},
		{"a timeout says so",
			messages.Resolved{State: messages.StateExpired, Decision: messages.Decision{ReasonCode: messages.ReasonTimeout, DecidedBy: messages.Decider{Kind: messages.DeciderReaper}}},
			"Timed out (no approver response)"},
		{"an agent's cancel says who and why",
			messages.Resolved{State: messages.StateCancelled, Decision: messages.Decision{ReasonCode: messages.ReasonCancelled, Reason: "agent shut down", DecidedBy: messages.Decider{Kind: messages.DeciderAgent}}},
			"Cancelled by the agent (agent shut down)"},
		{"a cascade names who gave the grant",
			messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{ReasonCode: messages.ReasonCascade,
				Reason: "allowed by the grant that approved r1 (alice)", DecidedBy: alice}},
			"Allowed: covered by the grant Alice via slack gave on another question"},
		{"a standing grant is said plainly, without the brokers' wording",
			messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{ReasonCode: messages.ReasonScopeGrant,
				Reason: `allowed by a standing session grant (auto-edit mode asks for exec-tier command "make")`}},
			"Allowed: an earlier Session or Always approval covers it"},
		{"a hard stop of the session",
			messages.Resolved{State: messages.StateRejected, Decision: messages.Decision{ReasonCode: messages.ReasonHardStop}},
			"Rejected: an earlier reject & stop ended the agent's turn"},
		{"a resolution the bot made up on replay gives its reason",
			messages.Resolved{Decision: messages.Decision{Reason: "settled while this bot was disconnected"}},
			"Settled elsewhere (settled while this bot was disconnected)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolutionText(tt.r); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReplyMessage(t *testing.T) {
	tests := []struct {
		name     string
		rep      messages.RespondReply
		required int
		want     string
	}{
		{"a counted quorum vote says how many", messages.RespondReply{Applied: true, State: messages.StatePending, ApprovalsSoFar: []string{"carol"}}, 2,
			"Your approval counts: 1 of 2 approvals"},
		{"an applied final answer says what it did",
			messages.RespondReply{Applied: true, State: messages.StateApproved, Decision: &messages.Decision{ReasonCode: messages.ReasonApproved, Scope: messages.ScopeOnce,
				DecidedBy: messages.Decider{ID: "alice", Display: "Alice", Channel: "web"}}}, 1,
			"Done: Approved (once) by Alice via web"},
		{"a late answer says who decided", messages.RespondReply{Applied: false, State: messages.StateApproved, Reason: "already settled by Bob"}, 1,
			"Not applied: already settled by Bob"},
		{"a refusal without a reason still names the decider",
			messages.RespondReply{Applied: false, State: messages.StateRejected, Decision: &messages.Decision{DecidedBy: messages.Decider{ID: "bob"}}}, 1,
			"Not applied: already decided by bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replyMessage(tt.rep, tt.required); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDeviceLabel(t *testing.T) {
	tests := []struct {
		name, supplied, ua, want string
	}{
		{"Chrome on an Android phone", "", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", "Chrome on Android"},
		{"Safari on an iPhone", "", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Safari on iPhone"},
		{"Firefox on Linux", "", "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0", "Firefox on Linux"},
		{"Edge on Windows", "", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0", "Edge on Windows"},
		{"curl", "", "curl/8.5.0", "curl"},
		{"another client by its product token", "", "signoff-smoke/1.0", "signoff-smoke"},
		{"no user agent", "", "", "unknown device"},
		{"a supplied name wins", "ops laptop", "curl/8.5.0", "ops laptop"},
		{"a supplied name loses its control characters", "evil\nname\x00", "", "evilname"},
		{"a long supplied name is cut", strings.Repeat("é", 100), "", strings.Repeat("é", 32)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := deviceLabel(tt.supplied, tt.ua); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTimeLeft(t *testing.T) {
	for d, want := range map[time.Duration]string{
		4*time.Minute + 59*time.Second: "4:59 left",
		9 * time.Second:                "0:09 left",
		2*time.Hour + 5*time.Minute:    "2h 05m left",
		0:                              "time is up",
		-time.Second:                   "time is up",
	} {
		if got := timeLeft(d); got != want {
			t.Errorf("timeLeft(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestLimiter(t *testing.T) {
	clk := newClock()
	l := newLimiter(2, 10*time.Second, clk.Now)
	for i := range 2 {
		if ok, _ := l.take("k"); !ok {
			t.Fatalf("take %d of a burst of 2 refused", i+1)
		}
	}
	ok, wait := l.take("k")
	if ok || wait != 10*time.Second {
		t.Fatalf("third take: ok=%v wait=%s, want refused with 10s to wait", ok, wait)
	}
	if ok, _ := l.take("other"); !ok {
		t.Fatal("another key shares the bucket")
	}
	clk.Advance(5 * time.Second)
	if ok, wait := l.take("k"); ok || wait != 5*time.Second {
		t.Fatalf("half a refill later: ok=%v wait=%s", ok, wait)
	}
	clk.Advance(5 * time.Second)
	if ok, _ := l.take("k"); !ok {
		t.Fatal("a refilled token was refused")
	}
	clk.Advance(time.Minute)
	l.sweep()
	l.mu.Lock()
	n := len(l.m)
	l.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d full buckets survived the sweep", n)
	}
}

// TestOnlyAShellCallsCommandGetsTheCommandBox (red team AG F1): the card's
// "$" command box and the notification summary take a "command" argument
// only from a call the brokers judged as a shell call; an MCP tool's
// decoy "command" is shown among its arguments, alike.
func TestOnlyAShellCallsCommandGetsTheCommandBox(t *testing.T) {
	ch, err := New(testConfig(t, "", "{}"), Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	q := question("req-f1", "SELECT count(*) FROM users")
	q.Request.Tool, q.Risk.Shell, q.Risk.Subcommands = "mcp__postgres__query", false, nil
	q.Request.Description = "count the users"
	q.Request.Arguments = json.RawMessage(`{"command":"SELECT count(*) FROM users","sql":"DROP TABLE users CASCADE"}`)
	qv, err := ch.questionView(q, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(qv.HTML, `class="command"`) || !strings.Contains(qv.HTML, "DROP TABLE users CASCADE") {
		t.Errorf("an MCP call's card:\n%s", qv.HTML)
	}
	if !strings.Contains(qv.Summary, "DROP TABLE users CASCADE") || strings.Contains(qv.Summary, "count the users") {
		t.Errorf("an MCP call's summary %q", qv.Summary)
	}
	q.Request.Tool, q.Risk.Shell = "bash", true
	if qv, err = ch.questionView(q, "alice"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(qv.HTML, `<pre class="command"><span class="prompt" aria-hidden="true">$ </span>SELECT count(*) FROM users</pre>`) ||
		qv.Summary != "SELECT count(*) FROM users" {
		t.Errorf("a shell call's card (summary %q):\n%s", qv.Summary, qv.HTML)
	}
}

// TestIdsAreSetInMonospaceAndTheRequesterIsTheAgentsWord (red team AG F6,
// F11): in the page's proportional bold font I and l are one glyph, so
// ci-3/cIaude passed for ci-3/claude where an Always grant names it; the
// ids a grant is bound to are set as code. "for alice" is what the agent
// says, not what the brokers verified.
func TestIdsAreSetInMonospaceAndTheRequesterIsTheAgentsWord(t *testing.T) {
	ch, err := New(testConfig(t, "", "{}"), Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	q := question("req-f6", "make deploy")
	q.Request.AgentID, q.Request.RequestedBy = "ci-3/cIaude", "bob"
	qv, err := ch.questionView(q, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent <strong><code>ci-3/cIaude</code></strong>", "for <code>bob</code> (as the agent says)"} {
		if !strings.Contains(qv.HTML, want) {
			t.Errorf("the card lacks %q:\n%s", want, qv.HTML)
		}
	}
}
