package slack

import (
	"net/url"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// FuzzParseInteraction checks that no body panics the parser and that a
// click it accepts names one of the bot's actions, a user and a request id
// that are subject tokens.
func FuzzParseInteraction(f *testing.F) {
	f.Add("payload=" + url.QueryEscape(`{"type":"block_actions","user":{"id":"U1"},"actions":[{"action_id":"signoff_approve","value":"r1"}],"container":{"message_ts":"1.2","channel_id":"C1"},"response_url":"https://hooks.slack.com/x"}`))
	f.Add("payload=" + url.QueryEscape(`{"type":"block_actions","user":{"id":"U1"},"actions":[]}`))
	f.Add("payload=%7Bnot")
	f.Add("%zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		k, err := parseInteraction([]byte(body))
		if err != nil {
			return
		}
		switch k.action {
		case actionApprove, actionSession, actionAlways, actionDeny, actionDenyStop:
		default:
			t.Fatalf("accepted action %q", k.action)
		}
		if messages.ValidateToken("request id", k.requestID) != nil || messages.ValidateToken("user", k.user) != nil {
			t.Fatalf("accepted click %+v", k)
		}
	})
}
