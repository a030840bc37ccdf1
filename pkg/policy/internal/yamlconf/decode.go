package yamlconf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Decoder walks a YAML node tree with the file name its errors carry;
// its methods return the first mistake.
type Decoder struct {
	File string
}

func (d *Decoder) Errf(n *yaml.Node, where, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	return &Error{File: d.File, Line: n.Line, Column: n.Column, Msg: msg}
}

// member is one key/value pair of a mapping.
type Member struct {
	Key      string
	KeyNode  *yaml.Node
	Val      *yaml.Node
	Location string // the dotted path of the value, for messages
}

func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func NodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if IsNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func JoinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// noAlias rejects YAML aliases: policy files are read by people deciding
// what an agent may do, so every value is written out where it applies (and
// alias expansion is a classic way to make a parser do unbounded work).
func (d *Decoder) NoAlias(n *yaml.Node, where string) error {
	if n.Kind == yaml.AliasNode {
		return d.Errf(n, where, "YAML aliases (*%s) are not supported in policy files; write the value out", n.Value)
	}
	return nil
}

// mapping checks that n is a mapping (or empty), has no duplicate keys and
// only allowed keys (when allowed is non-nil).
func (d *Decoder) Mapping(n *yaml.Node, where string, allowed []string) ([]Member, error) {
	if err := d.NoAlias(n, where); err != nil {
		return nil, err
	}
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.Errf(n, where, "want a mapping, got %s", NodeKind(n))
	}
	out := make([]Member, 0, len(n.Content)/2)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := d.NoAlias(k, where); err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode || IsNull(k) {
			return nil, d.Errf(k, where, "keys must be plain strings, got %s", NodeKind(k))
		}
		if first, dup := seen[k.Value]; dup {
			return nil, d.Errf(k, where, "duplicate key %q (first at line %d)", k.Value, first.Line)
		}
		seen[k.Value] = k
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, d.Errf(k, where, "unknown key %q (want %s)", k.Value, OrList(allowed))
		}
		if err := d.NoAlias(v, JoinPath(where, k.Value)); err != nil {
			return nil, err
		}
		out = append(out, Member{Key: k.Value, KeyNode: k, Val: v, Location: JoinPath(where, k.Value)})
	}
	return out, nil
}

// sequence checks that n is a list (or empty) and returns its items.
func (d *Decoder) Sequence(n *yaml.Node, where string) ([]*yaml.Node, error) {
	if err := d.NoAlias(n, where); err != nil {
		return nil, err
	}
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.Errf(n, where, "want a list, got %s", NodeKind(n))
	}
	for _, it := range n.Content {
		if err := d.NoAlias(it, where); err != nil {
			return nil, err
		}
	}
	return n.Content, nil
}

// Strings decodes n, a list of non-empty strings (or empty), passing each
// item to each with its location (where[i]) and its text; it stops at the
// first error.
func (d *Decoder) Strings(n *yaml.Node, where string, each func(it *yaml.Node, loc, s string) error) error {
	items, err := d.Sequence(n, where)
	if err != nil {
		return err
	}
	for i, it := range items {
		loc := fmt.Sprintf("%s[%d]", where, i)
		s, err := d.Str(it, loc)
		if err != nil {
			return err
		}
		if err := each(it, loc, s); err != nil {
			return err
		}
	}
	return nil
}

// str returns a non-empty scalar. Numbers are accepted as their text
// (approver ids may be numeric chat user ids).
func (d *Decoder) Str(n *yaml.Node, where string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.Errf(n, where, "want a string, got %s", NodeKind(n))
	}
	if IsNull(n) || n.Value == "" {
		return "", d.Errf(n, where, "must not be empty")
	}
	return n.Value, nil
}

func (d *Decoder) Duration(n *yaml.Node, where string) (time.Duration, error) {
	s, err := d.Str(n, where)
	if err != nil {
		return 0, err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, d.Errf(n, where, "invalid duration %q (want a Go duration such as 90s, 5m or 1h30m)", s)
	}
	if v <= 0 {
		return 0, d.Errf(n, where, "duration must be positive, got %s", s)
	}
	return v, nil
}

func (d *Decoder) PositiveInt(n *yaml.Node, where string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, d.Errf(n, where, "want a whole number, got %s", NodeKind(n))
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < 1 {
		return 0, d.Errf(n, where, "must be at least 1, got %s", n.Value)
	}
	return v, nil
}

func OrList(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func (d *Decoder) Boolean(n *yaml.Node, where string) (bool, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, d.Errf(n, where, "want true or false, got %s", NodeKind(n))
	}
	return n.Value == "true", nil
}

// ConfigError reports a mistake in a policy file at a precise position.
// Line and Column are 1-based; zero means unknown (the error then concerns
// the file as a whole).
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// Error formats the error as "file:line:col: message", the form editors and
// CI annotations understand.
func (e *Error) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "<policy>"
	}
	b.WriteString(file)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}
