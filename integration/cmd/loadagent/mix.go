package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// kind is what the policy is expected to do with a call.
type kind string

const (
	kindAllow kind = "allow"
	kindDeny  kind = "deny"
	kindAsk   kind = "ask"
)

// kinds in the order they are listed and scheduled.
var kinds = []kind{kindAllow, kindDeny, kindAsk}

// callSpec is one call of the mix.
type callSpec struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

func (c callSpec) String() string {
	data, _ := json.Marshal(c)
	return string(data)
}

// defaultCalls fit the built-in policy and deploy/compose/policy.yaml.
var defaultCalls = map[kind]callSpec{
	kindAllow: {Tool: "bash", Arguments: json.RawMessage(`{"command":"ls -la"}`)},
	kindDeny:  {Tool: "read_file", Arguments: json.RawMessage(`{"path":"app/.env"}`)},
	kindAsk:   {Tool: "bash", Arguments: json.RawMessage(`{"command":"make deploy"}`)},
}

// parseCall reads a call given as JSON {"tool", "arguments"}.
func parseCall(s string) (callSpec, error) {
	var c callSpec
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("want JSON {\"tool\": …, \"arguments\": {…}}: %w", err)
	}
	if dec.More() {
		return c, errors.New("trailing data after the JSON object")
	}
	if strings.TrimSpace(c.Tool) == "" {
		return c, errors.New("tool is required")
	}
	if a := bytes.TrimSpace(c.Arguments); len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null")) {
		return c, fmt.Errorf("arguments must be a JSON object, got %s", a)
	}
	return c, nil
}

// mix is the weight of each kind of call.
type mix map[kind]int

// parseMix reads "allow=8,deny=1,ask=1". Kinds left out weigh 0; at least
// one weight must be positive.
func parseMix(s string) (mix, error) {
	m := mix{}
	total := 0
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want KIND=WEIGHT", part)
		}
		k := kind(strings.TrimSpace(name))
		if k != kindAllow && k != kindDeny && k != kindAsk {
			return nil, fmt.Errorf("%q: unknown kind %q (want allow, deny or ask)", part, k)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%q: %s given twice", part, k)
		}
		w, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || w < 0 {
			return nil, fmt.Errorf("%q: weight must be a whole number ≥ 0", part)
		}
		m[k] = w
		total += w
	}
	if total == 0 {
		return nil, fmt.Errorf("%q: no kind has a positive weight", s)
	}
	return m, nil
}

// cycle returns one period of the mix: each kind as often as its weight,
// interleaved by smooth weighted round robin (allow=2,ask=1 gives allow,
// ask, allow), so a short run still sees every kind.
func (m mix) cycle() []kind {
	total := 0
	for _, k := range kinds {
		total += m[k]
	}
	current := map[kind]int{}
	out := make([]kind, 0, total)
	for range total {
		var best kind
		for _, k := range kinds {
			if m[k] == 0 {
				continue
			}
			current[k] += m[k]
			if best == "" || current[k] > current[best] {
				best = k
			}
		}
		current[best] -= total
		out = append(out, best)
	}
	return out
}

// schedule returns the kinds of agent a's n calls: the cycle, started at
// offset a so that the agents do not all send the same kind at once.
func (m mix) schedule(a, n int) []kind {
	c := m.cycle()
	out := make([]kind, n)
	for i := range out {
		out[i] = c[(a+i)%len(c)]
	}
	return out
}

// expected is the outcome a kind of call must get; ok is false when any
// outcome is acceptable (an asked call nobody here answers).
func expected(k kind, autoApprove bool) (messages.Outcome, bool) {
	switch k {
	case kindAllow:
		return messages.OutcomeAllow, true
	case kindDeny:
		return messages.OutcomeDeny, true
	}
	return messages.OutcomeAllow, autoApprove
}
