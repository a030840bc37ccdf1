package approverbot

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseConfig checks that no file panics the config parser, that every
// refusal is a *ConfigError naming the file, and that an accepted config
// is valid and names only known channels.
func FuzzParseConfig(f *testing.F) {
	f.Add("approvers:\n  alice: {}\ndesk:\n  approver: alice\n")
	f.Add("approvers:\n  alice: {chat: 0x10}\nchat: {token: t, rooms: {default: 1}}\n")
	f.Add("teams: [a, b]\nnats: {url: nats://x, inbox_prefix: _INBOX.bot}\napprovers: {bob: {im: U1}}\nim: {verbose: yes}\n")
	f.Add("approvers:\n  alice: &a {}\n  bob: *a\ndesk: {approver: alice}\n")
	f.Add("desk:\n  approver: alice\n approvers: {}\n")
	f.Add("- a\n- b\n")
	f.Add("\tx: 1\n")
	f.Add("{")
	f.Fuzz(func(t *testing.T, data string) {
		c, err := ParseConfig([]byte(data), "fuzz.yaml")
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("refusal %T %q is not a ConfigError naming the file", err, err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
		for _, name := range c.Enabled() {
			if _, ok := lookupKind(name); !ok {
				t.Fatalf("accepted unknown channel %q", name)
			}
		}
	})
}
