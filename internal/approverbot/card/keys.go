package card

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Every argument key is shown ([View.ArgKeys]), and a key is flagged
// ([View.Warnings]) when a person could misread what runs from it: it
// differs from a known key, or from another key of the call, only in case
// (a host may read either spelling); it appears more than once (the policy
// judged the last value, a host may take another); or it is one the hosts
// treat as changing how or where the call runs.

// knownKeys are the argument keys of the agents' own tools (Claude Code,
// Codex, Gemini CLI, opencode…), as they spell them.
var knownKeys = []string{
	"command", "cmd", "description", "timeout", "run_in_background", "dangerouslyDisableSandbox",
	"file_path", "path", "paths", "content", "old_string", "new_string", "replace_all", "edits",
	"pattern", "glob", "include", "url", "prompt", "query", "notebook_path", "cell_id", "new_source",
	"limit", "offset", "cwd", "workdir", "env", "shell", "sandbox_permissions", "justification",
	"with_escalated_permissions", "questions", "answers",
}

// execKeys are the keys the hosts treat as execution-affecting, with what
// they do: the table the policy judges them by too.
var execKeys = messages.ExecutionArguments

// ArgKeys lists the keys of an argument object in the order they came,
// repeats included; nil when raw is not a JSON object.
func ArgKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(unwrapJSONString(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// repeatedKeys lists the keys of the arguments that appear more than once
// in one object, once each: the top level's (keys, in order, repeats
// included) and the nested paths.
func repeatedKeys(keys, nested []string) []string {
	count := map[string]int{}
	var out []string
	for _, k := range keys {
		if count[k]++; count[k] == 2 {
			out = append(out, k)
		}
	}
	return append(out, nested...)
}

// SummarisedKeys lists the top-level arguments whose text is a summary
// standing in for an argument too large to send (messages.IsSummary):
// what the approver sees there is not what the host runs.
func SummarisedKeys(raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(unwrapJSONString(raw), &m) != nil {
		return nil
	}
	var out []string
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil && messages.IsSummary(s) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// NestedRepeats lists, as dotted paths (params.sql, edits[1].old_string),
// the keys that appear more than once in one object nested inside the
// arguments: what is shown holds their last value, a program reading the
// arguments may take the first. The top level's are [keyWarnings]'.
func NestedRepeats(raw json.RawMessage) []string {
	out, _ := nestedRepeats(raw)
	return out
}

// nestedRepeats is NestedRepeats, and whether the walk read the arguments
// to their end: one it could not finish has not looked at every key
// (red team Y2: a number past float64's range stopped it before a repeat).
func nestedRepeats(raw json.RawMessage) ([]string, bool) {
	data := unwrapJSONString(raw)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	var walk func(path string, top bool) bool
	walk = func(path string, top bool) bool {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				k, _ := kt.(string)
				p := k
				if path != "" {
					p = path + "." + k
				}
				if seen[k] && !top && !slices.Contains(out, p) {
					out = append(out, p)
				}
				seen[k] = true
				if !walk(p, false) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(path+"["+strconv.Itoa(i)+"]", false) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	return out, walk("", true)
}

// keyWarnings are the warnings of keys (from [ArgKeys]); each key and
// spelling is named once.
func keyWarnings(keys, nested []string, z *sanitizer) []string {
	var out []string
	for _, p := range nested {
		out = append(out, "⚠ Argument "+strconv.Quote(z.line(p))+" appears more than once: what is shown is its last value; a program may run the first.")
	}
	count := map[string]int{}
	for _, k := range keys {
		count[k]++
	}
	done := map[string]bool{}
	for _, k := range keys {
		if done[k] {
			continue
		}
		done[k] = true
		shown := strconv.Quote(z.line(k))
		if n := count[k]; n > 1 {
			out = append(out, "⚠ Argument "+shown+" appears "+strconv.Itoa(n)+" times: only its last value is shown; a host may run another.")
		}
		if twin := caseTwin(k, keys); twin != "" && !slices.Contains(knownKeys, k) {
			out = append(out, "⚠ Argument "+shown+" differs from "+strconv.Quote(z.line(twin))+" only in case: a host may read either.")
		}
		twin := caseTwin(k, nil)
		if what, ok := execKeys[k]; ok {
			out = append(out, "⚠ Argument "+shown+" "+what+".")
		} else if what, ok := execKeys[twin]; ok && twin != "" {
			out = append(out, "⚠ Argument "+shown+" may be read as "+strconv.Quote(twin)+", which "+what+".")
		} else if what, ok := messages.ExecutionArgument(k); ok {
			// Another spelling the policy reads as the same key
			// (workingDirectory, Dir-Path): one way of matching keys.
			out = append(out, "⚠ Argument "+shown+" is read as one that "+what+".")
		}
	}
	return out
}

// caseTwin is a key that differs from k only in case: another key of the
// call (others), or with others nil a known key; "" when there is none.
func caseTwin(k string, others []string) string {
	list := others
	if list == nil {
		list = knownKeys
	}
	for _, o := range list {
		if o != k && strings.EqualFold(o, k) {
			return o
		}
	}
	if others != nil && !slices.Contains(knownKeys, k) {
		return caseTwin(k, nil)
	}
	return ""
}

// maxExactInt is 2^53: past it not every integer is a double, and a
// program that reads JSON numbers as doubles (JavaScript, many others)
// acts on another number than the card shows.
const maxExactInt = 1 << 53

// InexactNumbers lists the numbers of the arguments that a program which
// reads JSON numbers as doubles (JavaScript, many others) takes for
// another: integers past ±2^53 that no double holds, in any notation
// (9007199254740993, 9007199254740993.0, 90071992547409931e-1), each with
// the number it becomes, and numbers past a double's range, which become
// Infinity — the card shows the digits sent, such a tool server acts on
// the other (red team V7, Y5). Past maxFlagged it says how many more.
func InexactNumbers(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(unwrapJSONString(raw)))
	dec.UseNumber()
	var out []string
	more := 0
	for {
		t, err := dec.Token()
		if err != nil {
			break
		}
		n, ok := t.(json.Number)
		if !ok {
			continue
		}
		what := inexactNumber(string(n))
		switch {
		case what == "":
		case len(out) < maxFlagged:
			out = append(out, what)
		default:
			more++
		}
	}
	if more > 0 {
		out = append(out, "and "+strconv.Itoa(more)+" more")
	}
	return out
}

// inexactNumber says what a double makes of the JSON number n ("" when it
// is the same number, or a fraction a double rounds, as every program
// does).
func inexactNumber(n string) string {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		if math.IsInf(f, 0) {
			return n + ", read as Infinity"
		}
		return n + ", read as " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	// Between 2^53 and 1e21 (past which JavaScript writes numbers with an
	// exponent, as the card's 1.5e300 is read) a double holds no fraction
	// and not every integer.
	if len(n) > 400 || math.Abs(f) < maxExactInt || math.Abs(f) >= 1e21 {
		return ""
	}
	r, ok := new(big.Rat).SetString(n)
	if !ok {
		return ""
	}
	exact := new(big.Rat).SetFloat64(f)
	if exact == nil || exact.Cmp(r) == 0 {
		return ""
	}
	return n + ", read as " + exact.Num().String()
}
