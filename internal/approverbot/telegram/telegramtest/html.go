package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// allowedTags are the tags of the Bot API's HTML style
// (https://core.telegram.org/bots/api#html-style).
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

// ParseHTML checks text as the Bot API's HTML parse mode reads it and
// returns the visible text. Like Telegram it refuses unsupported tags,
// unbalanced tags and unknown named entities; it is stricter in one
// point the documentation sets ("all <, > and & symbols that are not a
// part of a tag or an HTML entity must be replaced with the corresponding
// HTML entities"): a bare '>' is refused too.
func ParseHTML(text string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		c := text[i]
		switch c {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("can't parse entities: unclosed start tag at byte offset %d", i)
			}
			tag := text[i+1 : i+end]
			if strings.HasPrefix(tag, "/") {
				name := strings.TrimSpace(tag[1:])
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("can't parse entities: unmatched end tag at byte offset %d, expected %q, found \"</%s>\"", i, expected(stack), name)
				}
				stack = stack[:len(stack)-1]
			} else {
				name, _, _ := strings.Cut(tag, " ")
				if !allowedTags[name] {
					return "", fmt.Errorf("can't parse entities: unsupported start tag %q at byte offset %d", name, i)
				}
				for _, open := range stack {
					if (open == "pre" && name != "code") || open == "code" {
						return "", fmt.Errorf("can't parse entities: %q can't contain %q at byte offset %d", open, name, i)
					}
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			end := strings.IndexByte(text[i:], ';')
			if end < 0 {
				return "", fmt.Errorf("can't parse entities: unescaped '&' at byte offset %d", i)
			}
			r, ok := entity(text[i+1 : i+end])
			if !ok {
				return "", fmt.Errorf("can't parse entities: unsupported HTML entity %q at byte offset %d", text[i:i+end+1], i)
			}
			out.WriteRune(r)
			i += end + 1
		case '>':
			return "", fmt.Errorf("can't parse entities: unescaped '>' at byte offset %d", i)
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return out.String(), nil
}

func expected(stack []string) string {
	if len(stack) == 0 {
		return ""
	}
	return "</" + stack[len(stack)-1] + ">"
}

// entity decodes the supported entities: the four named ones and numeric
// ones.
func entity(name string) (rune, bool) {
	switch name {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "quot":
		return '"', true
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if h, ok := strings.CutPrefix(num, "x"); ok {
			num, base = h, 16
		}
		n, err := strconv.ParseUint(num, base, 32)
		if err != nil || n > 0x10FFFF {
			return 0, false
		}
		return rune(n), true
	}
	return 0, false
}

// length counts text as the Bot API does, in UTF-16 code units.
func length(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
