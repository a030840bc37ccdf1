package telegram

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/telegram/telegramtest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// FuzzRenderedMessagesAreValidTelegramHTML checks that whatever an agent
// and an approver send, the question and its settled form are HTML the
// Bot API accepts, within its length limit, and show the command as sent.
func FuzzRenderedMessagesAreValidTelegramHTML(f *testing.F) {
	f.Add("bash", "rm -rf / && echo <b>", "<a href=\"x\">", "why & how", "feedback </pre>", 3)
	f.Add("write<i>", strings.Repeat("&amp;", 900), "", "", "", 0)
	f.Add("t", "😀\u0301\n\t", "&#x41;", "&lt;", "\x00", 500)
	f.Fuzz(func(t *testing.T, tool, command, description, reason, feedback string, subs int) {
		args, err := json.Marshal(map[string]string{"command": command})
		if err != nil {
			t.Skip()
		}
		q := hostileQuestion()
		q.Request.Tool, q.Request.Arguments, q.Request.Description, q.Risk.Reason = tool, args, description, reason
		for i := range min(max(subs, 0), 30) {
			q.Risk.Subcommands = append(q.Risk.Subcommands, messages.Verdict{Command: command + string(rune('a'+i%26)), Action: "ask", Reason: reason})
		}
		html, _ := renderQuestion(q, time.Unix(1_700_000_000, 0))
		r := messages.Resolved{State: messages.StateRejected, Decision: messages.Decision{Outcome: messages.OutcomeDeny,
			ReasonCode: messages.ReasonRejected, Feedback: feedback, DecidedBy: messages.Decider{ID: description}}}
		for _, text := range []string{html, renderSettled(html, r)} {
			shown, err := telegramtest.ParseHTML(text)
			if err != nil {
				t.Fatalf("the Bot API would refuse: %v\n%q", err, text)
			}
			if n := length(shown); n > maxMessageChars {
				t.Fatalf("%d characters, limit %d", n, maxMessageChars)
			}
		}
		if shown, _ := telegramtest.ParseHTML(html); len(command) > 0 && len(command) < 500 && strings.ToValidUTF8(command, "\uFFFD") == command &&
			!strings.Contains(shown, command) && !strings.Contains(shown, "Disguised text") {
			// Shown as sent, or escaped where the card says it escaped
			// (a combining mark on an emoji, "😀\u0301").
			t.Fatalf("the command %q is not shown as sent:\n%s", command, shown)
		}
	})
}
