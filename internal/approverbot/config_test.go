package approverbot

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestConfigErrorsNameTheFileTheLineAndTheKey(t *testing.T) {
	const desk = "approvers:\n  alice: {}\ndesk:\n  approver: alice\n"
	tests := []struct {
		name string
		yaml string
		want string // the whole error
	}{
		{"a misspelt key of a channel's section lists the section's keys",
			"approvers:\n  alice: {}\ndesk:\n  aprover: alice\n",
			`bot.yaml:4: unknown key "aprover" in desk (known: approver)`},
		{"a misspelt top-level key lists the core's and the channels' keys",
			desk + "teamz: [ops]\n",
			`bot.yaml:5: unknown key "teamz" (known: approvers, chat, desk, http, im, nats, prefix, teams)`},
		{"a misspelt approver key lists the channels' keys",
			"approvers:\n  alice: {displya: Alice}\ndesk: {approver: alice}\n",
			`bot.yaml:2: unknown key "displya" in approvers.alice (known: chat, display, im, im_pin, teams)`},
		{"a string where an integer goes says which was wanted",
			"approvers:\n  alice:\n    chat: abc\ndesk: {approver: alice}\n",
			`bot.yaml:3: approvers.alice.chat: want an integer, got "abc"`},
		{"a string where a mapping goes",
			desk + "chat:\n  token: t\n  rooms: lobby\n",
			`bot.yaml:7: chat.rooms: want a mapping, got "lobby"`},
		{"a word where a boolean goes",
			desk + "im: {verbose: sometimes}\n",
			`bot.yaml:5: im.verbose: want true or false, got "sometimes"`},
		{"a list where a string goes",
			desk + "prefix: [a, b]\n",
			`bot.yaml:5: prefix: want a string, got a list`},
		{"a nested unknown key",
			desk + "nats:\n  url: nats://x\n  tls: on\n",
			`bot.yaml:7: unknown key "tls" in nats (known: ca, cert, creds, inbox_prefix, insecure, key, max_pings_out, name, nkey_seed, password, ping_interval, url, user)`},
		{"a check of a section names its key's line",
			desk + "chat:\n  token: t\n  rooms: {ops: 1}\n",
			`bot.yaml:7: chat.rooms: no destination for team "default"`},
		{"a key indented one space short is reported where it is, not a line above",
			"teams: [default]\napprovers:\n  alice: {}\ndesk:\n  approver: alice\n im: {}\n",
			`bot.yaml:6: invalid YAML: this line is indented 1 space(s), which lines up with no section above it (those are indented 0, 2)`},
		{"a key indented short after a deeper block",
			"teams: [default]\napprovers:\n  alice:\n    display: Alice\n   im: U1\ndesk: {approver: alice}\n",
			`bot.yaml:5: invalid YAML: this line is indented 3 space(s), which lines up with no section above it (those are indented 0, 2, 4)`},
		{"a key indented under a value",
			"teams: [default]\napprovers:\n  alice:\n    display: Alice\n      im: U1\ndesk: {approver: alice}\n",
			`bot.yaml:5: invalid YAML: this line is indented deeper than the key above it, which already has a value`},
		{"a tab in the indentation",
			"approvers:\n  alice: {}\ndesk:\n\tapprover: alice\n",
			`bot.yaml:4: invalid YAML: a tab in the indentation (YAML indents with spaces)`},
		{"an empty file", "\n# nothing\n", `bot.yaml: the config is empty (see docs/APPROVERS.md)`},
		{"an alias (a billion laughs needs them)",
			"approvers:\n  alice: {}\ndesk: &d {approver: alice}\nim: *d\n",
			`bot.yaml:4: im: YAML aliases (*d) are not supported in the bot's config; write the value out`},
		{"an alias among the approvers",
			"approvers:\n  alice: &a {}\n  bob: *a\ndesk: {approver: alice}\n",
			`bot.yaml:3: approvers.bob: YAML aliases (*a) are not supported in the bot's config; write the value out`},
		{"one user written two ways for two approvers",
			"approvers:\n  alice: {chat: 16}\n  bob: {chat: 0x10}\ndesk: {approver: alice}\n",
			`bot.yaml:3: approvers.bob.chat: user 16 already maps to alice`},
		{"a list item is placed at its own line",
			"approvers: {alice: {}}\ndesk: {approver: alice}\nteams:\n  - default\n  - on call\n",
			`bot.yaml:5: teams[1] "on call": must be a single subject token (no '.', '*', '>' or whitespace)`},
		{"a key set twice in a section",
			"approvers:\n  alice: {}\ndesk:\n  approver: alice\n  approver: bob\n",
			`bot.yaml:5: desk.approver: set twice (first at line 4)`},
		{"an approver listed twice",
			"approvers:\n  alice: {}\n  alice: {display: Alice}\ndesk: {approver: alice}\n",
			`bot.yaml:3: approvers.alice: set twice (first at line 2)`},
		{"a section given twice",
			"approvers:\n  alice: {}\ndesk: {approver: alice}\ndesk: {approver: alice}\n",
			`bot.yaml:4: desk: set twice (first at line 3)`},
		{"an approver's key set twice",
			"approvers:\n  alice: {chat: 1, chat: 2}\ndesk: {approver: alice}\n",
			`bot.yaml:2: approvers.alice.chat: set twice (first at line 2)`},
		{"a file over 1 MiB", desk + "# " + strings.Repeat("x", 1<<20) + "\n", `bot.yaml: the config is larger than 1048576 bytes`},
		{"a list at the top", "- a\n- b\n", `bot.yaml:1: the config must be a mapping of keys (see docs/APPROVERS.md), got a list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), "bot.yaml")
			if err == nil {
				t.Fatalf("ParseConfig accepted:\n%s", tt.yaml)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *ConfigError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "approverbot.") || strings.Contains(err.Error(), "!!") {
				t.Errorf("error leaks Go or YAML internals: %s", err)
			}
		})
	}
}

func TestConfigAcceptsWhatYAMLAcceptsForEachType(t *testing.T) {
	// yaml.v3 reads yes/on as booleans, 0x10 as an integer: configs that
	// loaded before the checks must still load.
	c, err := ParseConfig([]byte("approvers:\n  bob: {chat: 0x10}\ndesk: {approver: bob}\nim: {verbose: yes}\nchat: {token: t, rooms: {default: 1_000}}\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if im, _ := SectionOf[*imSection](c, "im"); !im.Verbose {
		t.Error("verbose: yes did not read as true")
	}
	if chat, _ := SectionOf[*chatSection](c, "chat"); chat.Rooms["default"] != 1000 {
		t.Errorf("rooms %v", chat.Rooms)
	}
}

func TestConfigSectionsAreDecodedIntoTheirKindsTypes(t *testing.T) {
	c, err := ParseConfig([]byte("approvers:\n  bob: {chat: 0x10, im: U1, im_pin: \"1234\"}\ndesk: {approver: bob}\nchat: {token: t, rooms: {default: -100}}\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chat, ok := SectionOf[*chatSection](c, "chat")
	if !ok || chat.Rooms["default"] != -100 {
		t.Fatalf("chat section %+v", c.Channels["chat"])
	}
	if _, ok := SectionOf[*imSection](c, "im"); ok {
		t.Error("a channel without a section is enabled")
	}
	if got := strings.Join(c.Enabled(), ","); got != "chat,desk" {
		t.Errorf("enabled %s, want chat,desk", got)
	}
	if id, ok := Recipient(c, "chat", "16"); !ok || id != "bob" {
		t.Errorf("chat user 16 (0x10 in the file) maps to %q, %v; want bob", id, ok)
	}
}

func TestNotSentTextSaysWhetherTheAnswerMayHaveBeenApplied(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no reply: it may have been applied", &respondFailure{errors.New("no broker answered: nats: timeout")},
			"Not confirmed: no broker answered: nats: timeout. The answer may have been applied; the question shows its outcome once it is settled."},
		{"a choice not offered was never sent", choiceErr(),
			"Not sent: Always is not offered: x. Nothing was decided."},
		{"an unknown approver", ErrUnknownApprover, "You are not a configured approver: nothing was sent."},
		{"another failure", errors.New("signing key gone"), "Not sent: signing key gone. Nothing was decided; try again."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NotSentText(tt.err); got != tt.want {
				t.Errorf("NotSentText = %q\nwant          %q", got, tt.want)
			}
		})
	}
}

func choiceErr() error { return fmt.Errorf("%w: Always is not offered: x", ErrChoice) }

// nats.ping_interval reads as a duration, nats.max_pings_out as an integer;
// a bad duration is an error naming the key.
func TestConfigReadsTheNATSPingSettings(t *testing.T) {
	c, err := ParseConfig([]byte("nats: {ping_interval: 2s, max_pings_out: 3}\napprovers:\n  bob: {chat: 1}\nchat: {token: t, rooms: {default: 1}}\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.NATS.PingInterval != 2*time.Second || c.NATS.MaxPingsOut != 3 {
		t.Errorf("ping every %s, %d out; want 2s, 3", c.NATS.PingInterval, c.NATS.MaxPingsOut)
	}
	_, err = ParseConfig([]byte("nats: {ping_interval: often}\napprovers:\n  bob: {chat: 1}\nchat: {token: t, rooms: {default: 1}}\n"), "bot.yaml")
	if err == nil || !strings.Contains(err.Error(), "ping_interval") {
		t.Errorf("a bad ping_interval: %v, want an error naming it", err)
	}
}

func TestOpenNATSIsAConnectionWithoutCredentials(t *testing.T) {
	for _, c := range []struct {
		name string
		nats NATSConfig
		open bool
	}{
		{"no credentials (the dev broker)", NATSConfig{URL: "nats://127.0.0.1:4222"}, true},
		{"a creds file", NATSConfig{Creds: "/etc/signoff/bot.creds"}, false},
		{"an nkey", NATSConfig{NKeySeed: "/etc/signoff/bot.nk"}, false},
		{"a user", NATSConfig{User: "bot", Password: "x"}, false},
		{"a client certificate", NATSConfig{Cert: "bot.crt", Key: "bot.key"}, false},
	} {
		if got := (&Config{NATS: c.nats}).OpenNATS(); got != c.open {
			t.Errorf("%s: OpenNATS = %v, want %v", c.name, got, c.open)
		}
	}
}

func TestApproverTeamsAreTeamsTheBotServes(t *testing.T) {
	c, err := ParseConfig([]byte("teams: [default, oncall]\napprovers:\n  alice: {teams: [oncall]}\n  bob: {}\ndesk: {approver: alice}\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		approver, team string
		sees           bool
	}{{"alice", "oncall", true}, {"alice", "default", false}, {"bob", "default", true}, {"mallory", "default", false}} {
		if got := c.Sees(tt.approver, tt.team); got != tt.sees {
			t.Errorf("Sees(%s, %s) = %v, want %v", tt.approver, tt.team, got, tt.sees)
		}
	}
	_, err = ParseConfig([]byte("teams: [default]\napprovers:\n  alice: {teams: [oncall]}\ndesk: {approver: alice}\n"), "bot.yaml")
	if err == nil || !strings.Contains(err.Error(), `approvers.alice.teams: "oncall" is not a team this bot serves`) {
		t.Errorf("a team the bot does not serve: %v", err)
	}
	_, err = ParseConfig([]byte("approvers:\n  alice: {teams: oncall}\ndesk: {approver: alice}\n"), "bot.yaml")
	if err == nil || !strings.Contains(err.Error(), "want a list of team names") {
		t.Errorf("teams as a string: %v", err)
	}
}
