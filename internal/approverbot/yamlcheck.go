package approverbot

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ConfigError is a mistake in the bot's config file, located as editors
// and CI annotations read it: "bot.yaml:7: unknown key "aprover" in
// terminal (known: approver)".
type ConfigError struct {
	File string
	Line int
	// Key is the dotted path of the offending key ("terminal.aprover");
	// empty for the whole file.
	Key string
	Msg string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlSyntaxError turns a yaml.v3 syntax error into a ConfigError.
// yaml.v3 reports most indentation mistakes at a line before the mistake
// (where the block it could not close began); when an indentation scan
// finds the line that breaks the nesting, that line is reported.
func yamlSyntaxError(file string, data []byte, err error) *ConfigError {
	msg := err.Error()
	if bad, why := misindented(data); bad > 0 {
		return &ConfigError{File: file, Line: bad, Msg: "invalid YAML: " + why}
	}
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return &ConfigError{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &ConfigError{File: file, Line: line, Msg: "invalid YAML: " + m[2]}
}

// misindented finds the first line whose indentation breaks the nesting of
// the lines above it: a tab in the indentation, a key indented to no level
// open above it, or a line indented under one that opens no block. It
// returns 0 when the indentation is consistent. Block scalars (| and >)
// and flow collections spanning lines end the scan (it cannot judge them).
func misindented(data []byte) (int, string) {
	levels := []int{0} // indentations of the open blocks
	opens := false     // the previous line opens a block (ends with ':')
	for i, raw := range strings.Split(string(data), "\n") {
		text := strings.TrimRight(raw, " \r")
		body := strings.TrimLeft(text, " \t")
		if body == "" || strings.HasPrefix(body, "#") || body == "---" {
			continue
		}
		lead := text[:len(text)-len(body)]
		if strings.Contains(lead, "\t") {
			return i + 1, "a tab in the indentation (YAML indents with spaces)"
		}
		ind := len(lead)
		top := levels[len(levels)-1]
		switch {
		case ind > top && !opens:
			return i + 1, "this line is indented deeper than the key above it, which already has a value"
		case ind > top:
			levels = append(levels, ind)
		case ind < top:
			open := levelList(levels)
			for len(levels) > 1 && levels[len(levels)-1] > ind {
				levels = levels[:len(levels)-1]
			}
			if levels[len(levels)-1] != ind {
				return i + 1, fmt.Sprintf("this line is indented %d space(s), which lines up with no section above it (%s)", ind, open)
			}
		}
		item := strings.HasPrefix(body, "- ") || body == "-"
		if item {
			// The item's own keys sit after the dash.
			rest := strings.TrimLeft(strings.TrimPrefix(body, "-"), " ")
			levels = append(levels, ind+len(body)-len(rest))
			body = rest
		}
		if strings.HasSuffix(body, "|") || strings.HasSuffix(body, ">") || strings.HasSuffix(body, "|-") ||
			strings.HasSuffix(body, ">-") || strings.Count(body, "[") != strings.Count(body, "]") ||
			strings.Count(body, "{") != strings.Count(body, "}") {
			return 0, ""
		}
		opens = strings.HasSuffix(body, ":") || (item && body == "")
		if item && !opens {
			// "- key: value" may be followed by the item's next key.
			opens = false
		}
	}
	return 0, ""
}

func levelList(levels []int) string {
	s := make([]string, len(levels))
	for i, l := range levels {
		s[i] = strconv.Itoa(l)
	}
	return "those are indented " + strings.Join(s, ", ")
}

// checkNode walks a YAML node against the Go type it decodes into and
// returns the first mistake: an unknown key (with the known ones), a value
// of the wrong kind (with the kind wanted). keys adds the known keys of a
// mapping the type does not list (the channels' sections).
func checkNode(file string, n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.AliasNode {
		// As in the policy: an alias can multiply a small file into a huge
		// document, and a config gains nothing from it.
		return &ConfigError{File: file, Line: n.Line, Key: path, Msg: fmt.Sprintf("%s: YAML aliases (*%s) are not supported in the bot's config; write the value out", orConfig(path), n.Value)}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	where := path
	if where == "" {
		where = "the config"
	}
	bad := func(want string) error {
		return &ConfigError{File: file, Line: n.Line, Key: path, Msg: fmt.Sprintf("%s: want %s, got %s", where, want, describe(n))}
	}
	// A scalar is whatever yaml.v3 itself accepts for the type (yes/on
	// for booleans, 0x10 for integers, 90s for durations): the check only
	// words the refusal.
	scalar := func(want string) error {
		if n.Kind != yaml.ScalarNode || n.Decode(reflect.New(t).Interface()) != nil {
			return bad(want)
		}
		return nil
	}
	if t == reflect.TypeOf(time.Duration(0)) {
		return scalar("a duration such as 30s or 12h")
	}
	if n.Kind == yaml.MappingNode {
		if err := noDuplicateKeys(file, n, path); err != nil {
			return err
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return bad("a mapping of " + strings.Join(fieldKeys(t), ", "))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fieldByKey(t, k.Value)
			if !ok {
				in := ""
				if path != "" {
					in = " in " + path
				}
				return &ConfigError{File: file, Line: k.Line, Key: join(path, k.Value),
					Msg: fmt.Sprintf("unknown key %q%s (known: %s)", k.Value, in, strings.Join(fieldKeys(t), ", "))}
			}
			if err := checkNode(file, v, f.Type, join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad("a mapping")
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return &ConfigError{File: file, Line: k.Line, Key: path, Msg: where + ": keys must be plain names"}
			}
			if err := checkNode(file, v, t.Elem(), join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return bad("a list")
		}
		for i, v := range n.Content {
			if err := checkNode(file, v, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.String:
		return scalar("a string")
	case reflect.Bool:
		return scalar("true or false")
	case reflect.Int, reflect.Int64, reflect.Int32:
		return scalar("an integer")
	}
	return nil
}

// noDuplicateKeys refuses a mapping that sets a key twice (YAML forbids it;
// a second value silently winning would hide a mistake).
func noDuplicateKeys(file string, n *yaml.Node, path string) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if first, dup := seen[k.Value]; dup {
			return &ConfigError{File: file, Line: k.Line, Key: join(path, k.Value),
				Msg: fmt.Sprintf("%s: set twice (first at line %d)", join(path, k.Value), first)}
		}
		seen[k.Value] = k.Line
	}
	return nil
}

func orConfig(path string) string {
	if path == "" {
		return "the config"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names what a node holds, for "got …".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch n.Tag {
	case "!!int":
		return "the number " + v
	case "!!bool":
		return v
	case "!!float":
		return "the number " + v
	}
	return strconv.Quote(v)
}

// yamlKey is a struct field's key in YAML ("" when it has none).
func yamlKey(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); yamlKey(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func fieldKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k := yamlKey(t.Field(i)); k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
