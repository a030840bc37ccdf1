package approverbot

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Config is the approver bot's configuration file (docs/APPROVERS.md).
// The core keys are below; every other top-level key is a channel's
// section, decoded into the type its [Kind] registered.
type Config struct {
	NATS   NATSConfig `yaml:"nats"`
	Prefix string     `yaml:"prefix"`
	// Teams are the teams whose questions this bot shows.
	Teams []string `yaml:"teams"`
	// Approvers maps approver ids (the ids the policy's teams list) to the
	// users that stand for them on each channel.
	Approvers map[string]ApproverConfig `yaml:"-"`
	// HTTP is the listener shared by the channels that serve HTTP, /healthz,
	// /readyz and /metrics.
	HTTP HTTPConfig `yaml:"http"`
	// Channels are the enabled channels' sections, by channel name: the
	// pointer each kind's Section returned. Read one with [SectionOf].
	Channels map[string]any `yaml:"-"`

	// lines are the lines of the keys, by dotted path, for errors.
	lines map[string]int
}

// NATSConfig says how to reach the plane.
type NATSConfig struct {
	URL      string `yaml:"url"`
	Creds    string `yaml:"creds"`
	NKeySeed string `yaml:"nkey_seed"` // file with the bot's nkey seed; also signs responses
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	CA       string `yaml:"ca"`
	Cert     string `yaml:"cert"`
	Key      string `yaml:"key"`
	Name     string `yaml:"name"`
	// InboxPrefix replaces "_INBOX" as the prefix of the bot's reply
	// subjects, so NATS permissions can let the bot read its own replies
	// only (deploy/nats gives approvers "_INBOX.approver.>": set
	// "_INBOX.approver").
	InboxPrefix string `yaml:"inbox_prefix"`
	// PingInterval and MaxPingsOut: a server that answered none of
	// MaxPingsOut pings sent PingInterval apart is left for another (a
	// frozen server is noticed in about interval × (max + 1)). Zero: 5 s
	// and 2.
	PingInterval time.Duration `yaml:"ping_interval"`
	MaxPingsOut  int           `yaml:"max_pings_out"`
	// Insecure lets the bot connect without credentials to a NATS server
	// that is not on this machine (refused otherwise: see
	// internal/approverbotd).
	Insecure bool `yaml:"insecure"`
}

// Sees reports whether approver may see and answer the questions of team
// through this bot: every team the bot serves, or, when the approver lists
// teams, those only. An approver the config does not know sees nothing.
func (c *Config) Sees(approver, team string) bool {
	a, ok := c.Approvers[approver]
	if !ok {
		return false
	}
	return a.Teams == nil || slices.Contains(a.Teams, team)
}

// Admits reports whether approver, as this config knows them (no provider
// groups), may see and answer q: for one of the teams q was announced to,
// approvers.<id>.teams must include it and the answerers the brokers name
// for it must admit them (a copy that names none: the config alone). A
// channel with one configured user (the terminal) shows only the questions
// Admits allows.
func (c *Config) Admits(approver string, q Question) bool {
	return q.Admits(func(team string) bool { return c.Sees(approver, team) }, approver, nil)
}

// OpenNATS reports whether the bot connects to NATS without credentials
// (no creds file, nkey, user or client certificate): a plane whose NATS has
// no authorization, such as the dev broker's (`broker --dev`), where any
// local process can publish questions and answers.
func (c *Config) OpenNATS() bool {
	n := c.NATS
	return n.Creds == "" && n.NKeySeed == "" && n.User == "" && n.Cert == ""
}

// OpenPlaneText is what the bot, the web page and the terminal say on a
// plane whose NATS has no authorization ([Config.OpenNATS]).
const OpenPlaneText = "This plane's NATS has no authorization (dev mode): any local process can publish questions and answer them. Use it on your own machine only."

// ApproverConfig is one approver: a display name, and the keys channels
// add (the Slack user id, the Telegram user id, the web password hash).
type ApproverConfig struct {
	Display string
	// Teams, when set, are the only teams whose questions this approver
	// sees on the web page and may answer through this bot (the teams the
	// policy lists them in); unset, every team the bot serves.
	Teams []string
	// Keys are the channels' keys of this approver, by key, as written
	// (integers in decimal).
	Keys map[string]string

	// groups are a signed-in person's provider groups (Answer.Identity);
	// never read from the config.
	groups []string
}

// Key returns the approver's value of a channel's key ("" when unset).
func (a ApproverConfig) Key(k string) string { return a.Keys[k] }

// HTTPConfig configures the bot's HTTP listener.
type HTTPConfig struct {
	Listen string `yaml:"listen"` // default 127.0.0.1:8090
	// OpsToken, when set, is the bearer token GET /readyz and GET /metrics
	// require (Authorization: Bearer <token>): on a listener that also
	// serves the web page to everyone, what the bot's metrics and
	// readiness say (channels, teams, failures) is for operators only.
	// /healthz stays open.
	OpsToken string `yaml:"ops_token"`
}

// Approver is an approver identity resolved from a channel user.
type Approver struct {
	ID      string
	Display string
}

// Enabled lists the enabled channels' names, sorted.
func (c *Config) Enabled() []string { return sortedKeys(c.Channels) }

// LoadConfig reads and checks a config file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data, path)
}

// MaxConfigSize bounds a config file (a real one is a few KiB).
const MaxConfigSize = 1 << 20

// coreKeys are the config's own top-level keys.
var coreKeys = []string{"approvers", "http", "nats", "prefix", "teams"}

func isCoreKey(k string) bool { return slices.Contains(coreKeys, k) }

// ParseConfig decodes and checks a config. Every mistake is a
// [*ConfigError] naming the file, the line and the key: unknown keys (with
// the known ones), values of the wrong type (with the type wanted), YAML
// syntax and indentation (at the line that breaks the nesting).
func ParseConfig(data []byte, name string) (c *Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, &ConfigError{File: name, Msg: fmt.Sprintf("cannot parse: %v", r)}
		}
	}()
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ConfigError{File: name, Msg: "the config is empty (see docs/APPROVERS.md)"}
	}
	if len(data) > MaxConfigSize {
		return nil, &ConfigError{File: name, Msg: fmt.Sprintf("the config is larger than %d bytes", MaxConfigSize)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntaxError(name, data, err)
	}
	if len(doc.Content) == 0 {
		return nil, &ConfigError{File: name, Msg: "the config is empty (see docs/APPROVERS.md)"}
	}
	c = &Config{Channels: map[string]any{}, Approvers: map[string]ApproverConfig{}, lines: map[string]int{}}
	if err := c.decode(name, doc.Content[0]); err != nil {
		return nil, err
	}
	c.setDefaults()
	if err := c.Validate(); err != nil {
		return nil, c.locate(name, err)
	}
	return c, nil
}

// decode fills c from the root mapping.
func (c *Config) decode(file string, root *yaml.Node) error {
	if root.Kind != yaml.MappingNode {
		return &ConfigError{File: file, Line: root.Line, Msg: "the config must be a mapping of keys (see docs/APPROVERS.md), got " + describe(root)}
	}
	if err := noDuplicateKeys(file, root, ""); err != nil {
		return err
	}
	core := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		c.lines[k.Value] = k.Line
		switch {
		case k.Value == "approvers":
			if err := c.decodeApprovers(file, v); err != nil {
				return err
			}
		case isCoreKey(k.Value):
			core.Content = append(core.Content, k, v)
		default:
			kind, ok := lookupKind(k.Value)
			if !ok {
				return &ConfigError{File: file, Line: k.Line, Key: k.Value,
					Msg: fmt.Sprintf("unknown key %q (known: %s)", k.Value, strings.Join(topKeys(), ", "))}
			}
			section := kind.Section()
			if err := checkNode(file, v, reflect.TypeOf(section), k.Value); err != nil {
				return err
			}
			if err := v.Decode(section); err != nil {
				return &ConfigError{File: file, Line: v.Line, Key: k.Value, Msg: k.Value + ": " + err.Error()}
			}
			c.Channels[k.Value] = section
			c.recordLines(k.Value, v)
		}
	}
	if err := checkNode(file, core, reflect.TypeOf(c).Elem(), ""); err != nil {
		return err
	}
	if err := core.Decode(c); err != nil {
		return &ConfigError{File: file, Msg: err.Error()}
	}
	for i := 0; i+1 < len(core.Content); i += 2 {
		c.recordLines(core.Content[i].Value, core.Content[i+1])
	}
	return nil
}

// recordLines remembers the line of every key and list item below path.
func (c *Config) recordLines(path string, n *yaml.Node) {
	if n.Kind == yaml.SequenceNode {
		for i, item := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			c.lines[p] = item.Line
			c.recordLines(p, item)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := path + "." + n.Content[i].Value
		c.lines[p] = n.Content[i].Line
		c.recordLines(p, n.Content[i+1])
	}
}

// decodeApprovers reads approvers: id → {display, and the channels' keys}.
func (c *Config) decodeApprovers(file string, n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return checkNode(file, n, reflect.TypeOf(map[string]string{}), "approvers")
	}
	if n.Kind != yaml.MappingNode {
		return &ConfigError{File: file, Line: n.Line, Key: "approvers", Msg: "approvers: want a mapping of approver ids, got " + describe(n)}
	}
	if err := noDuplicateKeys(file, n, "approvers"); err != nil {
		return err
	}
	keys := approverKeys()
	known := []string{"display", "teams"}
	for _, k := range keys {
		known = append(known, k.Key)
	}
	sort.Strings(known)
	for i := 0; i+1 < len(n.Content); i += 2 {
		idn := n.Content[i]
		where := "approvers." + idn.Value
		c.lines[where] = idn.Line
		a, err := c.decodeApprover(file, where, n.Content[i+1], keys, known)
		if err != nil {
			return err
		}
		c.Approvers[idn.Value] = a
	}
	return nil
}

// decodeApprover reads the entry of one approver, found at where: its
// display name, the teams it answers for and its keys for the channels
// (keys; known lists every key an entry may have, for the error naming
// an unknown one). A null entry is an approver with no keys.
func (c *Config) decodeApprover(file, where string, n *yaml.Node, keys []ApproverKey, known []string) (ApproverConfig, error) {
	if n.Kind == yaml.AliasNode {
		return ApproverConfig{}, checkNode(file, n, reflect.TypeOf(ApproverConfig{}), where)
	}
	a := ApproverConfig{Keys: map[string]string{}}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return a, nil
	}
	if n.Kind != yaml.MappingNode {
		return ApproverConfig{}, &ConfigError{File: file, Line: n.Line, Key: where, Msg: where + ": want a mapping of " + strings.Join(known, ", ") + ", got " + describe(n)}
	}
	if err := noDuplicateKeys(file, n, where); err != nil {
		return ApproverConfig{}, err
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		kn, vn := n.Content[j], n.Content[j+1]
		key := where + "." + kn.Value
		c.lines[key] = kn.Line
		if vn.Kind == yaml.AliasNode {
			return ApproverConfig{}, checkNode(file, vn, reflect.TypeOf(""), key)
		}
		switch kn.Value {
		case "teams":
			teams, err := decodeTeams(file, key, vn)
			if err != nil {
				return ApproverConfig{}, err
			}
			a.Teams = teams
		case "display":
			if vn.Kind != yaml.ScalarNode {
				return ApproverConfig{}, &ConfigError{File: file, Line: vn.Line, Key: key, Msg: key + ": want a string, got " + describe(vn)}
			}
			a.Display = vn.Value
		default:
			ak, ok := findKey(keys, kn.Value)
			if !ok {
				return ApproverConfig{}, &ConfigError{File: file, Line: kn.Line, Key: key,
					Msg: fmt.Sprintf("unknown key %q in %s (known: %s)", kn.Value, where, strings.Join(known, ", "))}
			}
			v, set, err := decodeApproverKey(file, key, vn, ak)
			if err != nil {
				return ApproverConfig{}, err
			}
			if set {
				a.Keys[kn.Value] = v
			}
		}
	}
	return a, nil
}

// decodeTeams reads an approver's teams, a list of team names. An empty
// list is returned non-nil: it answers for no team, where an approver
// with no list answers for every team ([ApproverConfig.Teams]).
func decodeTeams(file, key string, n *yaml.Node) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, &ConfigError{File: file, Line: n.Line, Key: key, Msg: key + ": want a list of team names, got " + describe(n)}
	}
	teams := []string{}
	for _, tn := range n.Content {
		if tn.Kind != yaml.ScalarNode {
			return nil, &ConfigError{File: file, Line: tn.Line, Key: key, Msg: key + ": want team names, got " + describe(tn)}
		}
		teams = append(teams, tn.Value)
	}
	return teams, nil
}

// decodeApproverKey reads the value of a channel's key ak for an approver,
// at key. It reports set false for a null value, which leaves the key
// unset. An integer key is returned in decimal.
func decodeApproverKey(file, key string, n *yaml.Node, ak ApproverKey) (v string, set bool, err error) {
	t := reflect.TypeOf("")
	if ak.Int {
		t = reflect.TypeOf(int64(0))
	}
	if err := checkNode(file, n, t, key); err != nil {
		return "", false, err
	}
	if n.Tag == "!!null" {
		return "", false, nil
	}
	if !ak.Int {
		return n.Value, true, nil
	}
	// Kept in decimal, so 16 and 0x10 are one user to the uniqueness
	// check and to Recipient.
	var i int64
	if err := n.Decode(&i); err != nil {
		return "", false, &ConfigError{File: file, Line: n.Line, Key: key, Msg: key + ": want an integer, got " + describe(n)}
	}
	return strconv.FormatInt(i, 10), true, nil
}

// topKeys lists the keys the config knows: the core's and the registered
// channels'.
func topKeys() []string {
	out := slices.Clone(coreKeys)
	for _, k := range Kinds() {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

// approverKeys lists the keys every registered channel adds to approvers.
func approverKeys() []ApproverKey {
	var out []ApproverKey
	for _, k := range Kinds() {
		out = append(out, k.ApproverKeys...)
	}
	return out
}

func findKey(keys []ApproverKey, k string) (ApproverKey, bool) {
	for _, ak := range keys {
		if ak.Key == k {
			return ak, true
		}
	}
	return ApproverKey{}, false
}

// locate turns an error of Validate ("terminal.approver: …") into a
// ConfigError at the line of the key it names.
func (c *Config) locate(file string, err error) error {
	msg := err.Error()
	key := msg
	if i := strings.IndexAny(key, ": "); i >= 0 {
		key = key[:i]
	}
	for key != "" {
		if line, ok := c.lines[key]; ok {
			return &ConfigError{File: file, Line: line, Key: key, Msg: msg}
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return &ConfigError{File: file, Msg: msg}
}

func (c *Config) setDefaults() {
	if c.Prefix == "" {
		c.Prefix = messages.DefaultPrefix
	}
	if c.NATS.URL == "" {
		c.NATS.URL = "nats://127.0.0.1:4222"
	}
	if c.NATS.Name == "" {
		c.NATS.Name = "signoff-approver-bot"
	}
	if len(c.Teams) == 0 {
		c.Teams = []string{"default"}
	}
	if c.HTTP.Listen == "" {
		c.HTTP.Listen = "127.0.0.1:8090"
	}
}

// Validate reports the first problem, naming the key. It runs each enabled
// channel's Check, which fills the section's defaults.
func (c *Config) Validate() error {
	if _, err := messages.NewSubjects(c.Prefix); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	if p := c.NATS.InboxPrefix; p != "" {
		if _, err := messages.NewSubjects(p); err != nil || strings.ContainsAny(p, "*>") {
			return fmt.Errorf("nats.inbox_prefix: %q: want dot-separated subject tokens without wildcards", p)
		}
	}
	for i, t := range c.Teams {
		if err := messages.ValidateToken("teams["+strconv.Itoa(i)+"]", t); err != nil {
			return err
		}
	}
	unique := map[string]map[string]string{} // key → value → approver
	for _, id := range sortedKeys(c.Approvers) {
		if err := checkApproverID(id); err != nil {
			return fmt.Errorf("approvers.%s: %w", id, err)
		}
		for _, t := range c.Approvers[id].Teams {
			if !slices.Contains(c.Teams, t) {
				return fmt.Errorf("approvers.%s.teams: %q is not a team this bot serves (teams: %s)", id, t, strings.Join(c.Teams, ", "))
			}
		}
		for _, ak := range approverKeys() {
			v := c.Approvers[id].Keys[ak.Key]
			if v == "" || !ak.User {
				continue
			}
			if unique[ak.Key] == nil {
				unique[ak.Key] = map[string]string{}
			}
			if other, dup := unique[ak.Key][v]; dup {
				return fmt.Errorf("approvers.%s.%s: user %s already maps to %s", id, ak.Key, v, other)
			}
			unique[ak.Key][v] = id
		}
	}
	if len(c.Channels) == 0 {
		names := make([]string, 0)
		for _, k := range Kinds() {
			names = append(names, k.Name)
		}
		return fmt.Errorf("no channel enabled: configure at least one of %s", strings.Join(names, ", "))
	}
	for _, name := range c.Enabled() {
		k, ok := lookupKind(name)
		if !ok {
			return fmt.Errorf("%s: no such channel in this program", name)
		}
		if k.Check != nil {
			if err := k.Check(c, c.Channels[name]); err != nil {
				return err
			}
		}
	}
	return nil
}

// TeamsMapped checks that every team of the bot has a destination in a
// channel's mapping (slack.channels, telegram.chats); key names it.
func (c *Config) TeamsMapped(key string, mapped []string) error {
	for _, t := range c.Teams {
		if !slices.Contains(mapped, t) {
			return fmt.Errorf("%s: no destination for team %q", key, t)
		}
	}
	return nil
}

// Keys returns m's keys, sorted.
func Keys[V any](m map[string]V) []string { return sortedKeys(m) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkApproverID refuses ids that could not be an approver id of the
// protocol (messages.Approver.ID): empty, over-long, with spaces or control
// characters.
func checkApproverID(id string) error {
	r := messages.Response{V: messages.Version, RequestID: "x", SessionID: "x", Approver: messages.Approver{ID: id}, Approved: true}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("approver id %q: %w", id, err)
	}
	return nil
}
