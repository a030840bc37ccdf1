package approverbot

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"sync"
)

// Kind registers one kind of channel with the core: its config section, the
// keys it adds to each approver's entry, how its users map to approvers and
// how to build it. A channel package registers its kind from init (as
// database/sql drivers do); the core names no channel, and a program gets
// the channels it imports (cmd/approver-bot imports every built-in one
// through internal/approverbot/channels).
type Kind struct {
	// Name is the channel's name: its config section's key, the
	// Approver.Channel of its answers, its label in logs and metrics.
	Name string
	// Section returns a new, empty config section to decode the channel's
	// key into: a pointer to a struct with yaml tags. Unknown keys and
	// values of the wrong type are refused with the section's known keys.
	Section func() any
	// ApproverKeys are the keys the channel adds to each entry of
	// approvers (slack: "slack", the Slack user id; web: "password_hash").
	ApproverKeys []ApproverKey
	// Check fills the section's defaults and checks it against the whole
	// config (teams mapped to destinations, the operator an approver);
	// its errors name keys as "slack.channels". nil: nothing to check.
	Check func(c *Config, section any) error
	// Recipient maps a user of the channel to an approver id (Teleport's
	// FetchRecipient): the channel's own way of saying who answers. nil:
	// the approver whose User key holds the user, or, for a kind without
	// a User key, the user itself (an approver id).
	Recipient func(c *Config, section any, user string) (approverID string, ok bool)
	// New builds the channel from its section.
	New func(e Env) (Channel, error)
}

// ApproverKey is a key a channel adds to approvers' entries.
type ApproverKey struct {
	Key string
	// Int: the value is an integer (a Telegram user id); else a string.
	Int bool
	// User: the value is the approver's user on the channel, which maps
	// to them; two approvers may not share it.
	User bool
}

// Env is what a channel is built from.
type Env struct {
	Config *Config
	// Logger is the bot's; the channel adds its "channel" key.
	// Section is the channel's config section, as Kind.Section returned
	// it, decoded and checked.
	Section any
	Logger  *slog.Logger
	// Stdin and Stdout are the process's (the terminal channel uses them).
	Stdin  io.Reader
	Stdout io.Writer
}

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// Register adds a kind of channel. It panics on a kind without a name,
// section or constructor, on a name registered twice, and on a name or
// approver key that a core key already uses (programming errors, found at
// start).
func Register(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	switch {
	case k.Name == "" || k.Section == nil || k.New == nil:
		panic("approverbot: Register: a kind needs Name, Section and New")
	case kinds[k.Name].Name != "":
		panic("approverbot: Register: channel " + k.Name + " registered twice")
	case isCoreKey(k.Name):
		panic("approverbot: Register: channel name " + k.Name + " is a core config key")
	}
	if t := reflect.TypeOf(k.Section()); t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic("approverbot: Register: " + k.Name + "'s Section must return a pointer to a struct")
	}
	for _, ak := range k.ApproverKeys {
		if ak.Key == "display" {
			panic("approverbot: Register: approver key display is the core's")
		}
	}
	kinds[k.Name] = k
}

// Kinds lists the registered kinds, by name.
func Kinds() []Kind {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lookupKind returns the kind registered as name.
func lookupKind(name string) (Kind, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// SectionOf returns the config section of channel name, typed; false when
// the channel is not enabled (or its section has another type).
func SectionOf[T any](c *Config, name string) (T, bool) {
	var zero T
	if c == nil {
		return zero, false
	}
	s, ok := c.Channels[name].(T)
	return s, ok
}

// Section is [SectionOf] for a channel's New: without the section, the
// error says "<name>: not configured (no <name> section)".
func Section[T any](c *Config, name string) (T, error) {
	s, ok := SectionOf[T](c, name)
	if !ok {
		return s, fmt.Errorf("%s: not configured (no %s section)", name, name)
	}
	return s, nil
}

// Build creates the channels the config enables, in name order.
func Build(c *Config, log *slog.Logger, stdin io.Reader, stdout io.Writer) ([]Channel, error) {
	var out []Channel
	for _, name := range c.Enabled() {
		k, ok := lookupKind(name)
		if !ok {
			return nil, fmt.Errorf("channel %s is configured but not built into this program", name)
		}
		ch, err := k.New(Env{Config: c, Section: c.Channels[name], Logger: log, Stdin: stdin, Stdout: stdout})
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}
