package slacktest

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// checkBlocks applies the documented Block Kit rules the bot's messages
// must meet (https://docs.slack.dev/reference/block-kit/blocks) and returns
// what breaks them. It is strict where Slack is strict, so that a message
// the fake accepts is one Slack accepts.
func checkBlocks(raw []json.RawMessage) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(raw) > 50 {
		bad("%d blocks, limit 50", len(raw))
	}
	blockIDs := map[string]bool{}
	actionIDs := map[string]bool{}
	for i, r := range raw {
		var b map[string]any
		if err := json.Unmarshal(r, &b); err != nil {
			bad("blocks[%d]: not an object", i)
			continue
		}
		where := fmt.Sprintf("blocks[%d]", i)
		if id, ok := b["block_id"].(string); ok {
			if n := utf8.RuneCountInString(id); n == 0 || n > 255 {
				bad("%s.block_id: %d characters, want 1..255", where, n)
			}
			if blockIDs[id] {
				bad("%s.block_id %q is not unique", where, id)
			}
			blockIDs[id] = true
		}
		switch t, _ := b["type"].(string); t {
		case "header":
			checkText(bad, where+".text", b["text"], 150, "plain_text")
		case "section":
			_, hasText := b["text"]
			fields, hasFields := b["fields"].([]any)
			if !hasText && !hasFields {
				bad("%s: a section needs text or fields", where)
			}
			if hasText {
				checkText(bad, where+".text", b["text"], 3000, "plain_text", "mrkdwn")
			}
			if len(fields) > 10 {
				bad("%s.fields: %d, limit 10", where, len(fields))
			}
			for j, f := range fields {
				checkText(bad, fmt.Sprintf("%s.fields[%d]", where, j), f, 2000, "plain_text", "mrkdwn")
			}
		case "context":
			for j, e := range elements(bad, where, b, 10) {
				if m, ok := e.(map[string]any); ok && m["type"] == "image" {
					continue
				}
				checkText(bad, fmt.Sprintf("%s.elements[%d]", where, j), e, 3000, "plain_text", "mrkdwn")
			}
		case "actions":
			for j, e := range elements(bad, where, b, 25) {
				checkButton(bad, fmt.Sprintf("%s.elements[%d]", where, j), e, actionIDs)
			}
		case "rich_text":
			els, _ := b["elements"].([]any)
			if len(els) == 0 {
				bad("%s.elements: empty", where)
			}
			for j, e := range els {
				checkRich(bad, fmt.Sprintf("%s.elements[%d]", where, j), e, 0)
			}
		case "divider":
		default:
			bad("%s: unsupported block type %q", where, t)
		}
	}
	return problems
}

// elements returns the elements of block b (at where), checking that it
// has 1 to limit of them.
func elements(bad func(string, ...any), where string, b map[string]any, limit int) []any {
	els, _ := b["elements"].([]any)
	if len(els) == 0 || len(els) > limit {
		bad("%s.elements: %d, want 1..%d", where, len(els), limit)
	}
	return els
}

// checkText checks a composition text object.
func checkText(bad func(string, ...any), where string, v any, limit int, types ...string) {
	m, ok := v.(map[string]any)
	if !ok {
		bad("%s: not a text object", where)
		return
	}
	t, _ := m["type"].(string)
	okType := false
	for _, want := range types {
		okType = okType || t == want
	}
	if !okType {
		bad("%s.type: %q, want one of %v", where, t, types)
	}
	s, _ := m["text"].(string)
	if n := utf8.RuneCountInString(s); n == 0 || n > limit {
		bad("%s.text: %d characters, want 1..%d", where, n, limit)
	}
}

func checkButton(bad func(string, ...any), where string, v any, actionIDs map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok || m["type"] != "button" {
		bad("%s: the fake models button elements only", where)
		return
	}
	checkText(bad, where+".text", m["text"], 75, "plain_text")
	id, _ := m["action_id"].(string)
	if n := utf8.RuneCountInString(id); n == 0 || n > 255 {
		bad("%s.action_id: %d characters, want 1..255", where, n)
	}
	if actionIDs[id] {
		bad("%s.action_id %q is not unique in the message", where, id)
	}
	actionIDs[id] = true
	if val, ok := m["value"].(string); ok && utf8.RuneCountInString(val) > 2000 {
		bad("%s.value: longer than 2000 characters", where)
	}
	switch st, _ := m["style"].(string); st {
	case "", "primary", "danger":
	default:
		bad("%s.style: %q, want primary or danger", where, st)
	}
	if c, ok := m["confirm"]; ok {
		cm, ok := c.(map[string]any)
		if !ok {
			bad("%s.confirm: not an object", where)
			return
		}
		checkText(bad, where+".confirm.title", cm["title"], 100, "plain_text")
		checkText(bad, where+".confirm.text", cm["text"], 300, "plain_text", "mrkdwn")
		checkText(bad, where+".confirm.confirm", cm["confirm"], 30, "plain_text")
		checkText(bad, where+".confirm.deny", cm["deny"], 30, "plain_text")
	}
}

// checkRich checks a rich text element: containers hold elements; text
// leaves hold a non-empty string.
func checkRich(bad func(string, ...any), where string, v any, depth int) {
	m, ok := v.(map[string]any)
	if !ok {
		bad("%s: not an object", where)
		return
	}
	t, _ := m["type"].(string)
	switch t {
	case "rich_text_section", "rich_text_preformatted", "rich_text_quote", "rich_text_list":
		if depth > 0 && t != "rich_text_section" {
			bad("%s: %s cannot be nested", where, t)
		}
		if t == "rich_text_list" {
			switch st, _ := m["style"].(string); st {
			case "bullet", "ordered":
			default:
				bad("%s.style: %q, want bullet or ordered", where, st)
			}
		}
		els, _ := m["elements"].([]any)
		if len(els) == 0 {
			bad("%s.elements: empty", where)
		}
		for j, e := range els {
			em, _ := e.(map[string]any)
			if t == "rich_text_list" && (em == nil || em["type"] != "rich_text_section") {
				bad("%s.elements[%d]: list items must be rich_text_section", where, j)
				continue
			}
			checkRich(bad, fmt.Sprintf("%s.elements[%d]", where, j), e, depth+1)
		}
	case "text":
		if s, _ := m["text"].(string); s == "" {
			bad("%s.text: empty", where)
		}
	case "link", "emoji", "user", "channel", "usergroup", "broadcast", "date", "color":
	default:
		bad("%s: unsupported rich text element %q", where, t)
	}
}
