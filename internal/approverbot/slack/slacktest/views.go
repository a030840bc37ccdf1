package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// triggerTTL is how long a trigger_id can open a view: 3 seconds, once
// (https://docs.slack.dev/interactivity/handling-user-interaction#modal_responses).
const triggerTTL = 3 * time.Second

// View is a modal as views.open received it
// (https://docs.slack.dev/reference/methods/views.open).
type View struct {
	ID              string
	TriggerID       string
	CallbackID      string
	Title           string
	PrivateMetadata string
	Blocks          []json.RawMessage
}

// Input is one input block of a view: its block id, label, element type
// and action id, and the options it offers (values and texts); for a
// plain_text_input, its initial value, max_length and multiline.
type Input struct {
	BlockID, Label, Element, ActionID string
	Optional                          bool
	Options                           []Option
	InitialValue                      string
	MaxLength                         int
	Multiline                         bool
}

// Option is one option of an input's element.
type Option struct{ Value, Text, Description string }

// Inputs lists the view's input blocks, in order.
func (v View) Inputs() []Input {
	var out []Input
	for _, raw := range v.Blocks {
		var b struct {
			Type     string `json:"type"`
			BlockID  string `json:"block_id"`
			Optional bool   `json:"optional"`
			Label    struct {
				Text string `json:"text"`
			} `json:"label"`
			Element struct {
				Type         string `json:"type"`
				ActionID     string `json:"action_id"`
				InitialValue string `json:"initial_value"`
				MaxLength    int    `json:"max_length"`
				Multiline    bool   `json:"multiline"`
				Options      []struct {
					Value string `json:"value"`
					Text  struct {
						Text string `json:"text"`
					} `json:"text"`
					Description *struct {
						Text string `json:"text"`
					} `json:"description"`
				} `json:"options"`
			} `json:"element"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "input" {
			continue
		}
		in := Input{BlockID: b.BlockID, Label: b.Label.Text, Element: b.Element.Type, ActionID: b.Element.ActionID, Optional: b.Optional,
			InitialValue: b.Element.InitialValue, MaxLength: b.Element.MaxLength, Multiline: b.Element.Multiline}
		for _, o := range b.Element.Options {
			opt := Option{Value: o.Value, Text: o.Text.Text}
			if o.Description != nil {
				opt.Description = o.Description.Text
			}
			in.Options = append(in.Options, opt)
		}
		out = append(out, in)
	}
	return out
}

type viewsOpenArgs struct {
	TriggerID string `json:"trigger_id"`
	View      struct {
		Type            string            `json:"type"`
		CallbackID      string            `json:"callback_id"`
		PrivateMetadata string            `json:"private_metadata"`
		Title           *json.RawMessage  `json:"title"`
		Submit          *json.RawMessage  `json:"submit"`
		Blocks          []json.RawMessage `json:"blocks"`
	} `json:"view"`
}

// viewsOpen checks a views.open call against the documented limits of a
// modal and its input blocks.
func (s *Server) viewsOpen(w http.ResponseWriter, data []byte) {
	var a viewsOpenArgs
	if err := json.Unmarshal(data, &a); err != nil {
		fail(w, "invalid_arguments", err.Error())
		return
	}
	s.mu.Lock()
	issued, known := s.triggers[a.TriggerID]
	delete(s.triggers, a.TriggerID)
	s.mu.Unlock()
	switch {
	case a.TriggerID == "" || !known:
		fail(w, "invalid_trigger_id")
		return
	case time.Since(issued) > triggerTTL:
		fail(w, "expired_trigger_id")
		return
	}
	if a.View.Type != "modal" {
		fail(w, "invalid_arguments", "view.type must be modal")
		return
	}
	var problems []string
	text := func(where string, raw *json.RawMessage, max int) {
		if raw == nil {
			problems = append(problems, where+": missing")
			return
		}
		var t struct{ Type, Text string }
		if json.Unmarshal(*raw, &t) != nil || t.Type != "plain_text" {
			problems = append(problems, where+": must be plain_text")
		} else if n := utf8.RuneCountInString(t.Text); n == 0 || n > max {
			problems = append(problems, fmt.Sprintf("%s: %d characters, want 1..%d", where, n, max))
		}
	}
	text("view.title", a.View.Title, 24)
	hasInput := false
	v := View{TriggerID: a.TriggerID, CallbackID: a.View.CallbackID, PrivateMetadata: a.View.PrivateMetadata, Blocks: a.View.Blocks}
	for i, in := range v.Inputs() {
		hasInput = true
		where := "input " + strconv.Itoa(i)
		if n := utf8.RuneCountInString(in.Label); n == 0 || n > 2000 {
			problems = append(problems, fmt.Sprintf("%s.label: %d characters, want 1..2000", where, n))
		}
		switch in.Element {
		case "plain_text_input":
			if in.MaxLength > 3000 {
				problems = append(problems, fmt.Sprintf("%s.element.max_length %d, limit 3000", where, in.MaxLength))
			}
			if in.MaxLength > 0 && utf8.RuneCountInString(in.InitialValue) > in.MaxLength {
				problems = append(problems, where+".element.initial_value is longer than max_length")
			}
		case "radio_buttons", "checkboxes":
			if n := len(in.Options); n == 0 || n > 10 {
				problems = append(problems, fmt.Sprintf("%s: %d options, want 1..10", where, n))
			}
		case "static_select", "multi_static_select":
			if n := len(in.Options); n == 0 || n > 100 {
				problems = append(problems, fmt.Sprintf("%s: %d options, want 1..100", where, n))
			}
		default:
			problems = append(problems, where+": element "+in.Element+" is not one the fake knows")
		}
		for _, o := range in.Options {
			if n := utf8.RuneCountInString(o.Text); n == 0 || n > 75 || utf8.RuneCountInString(o.Description) > 75 {
				problems = append(problems, where+": an option's text or description is not 1..75 characters")
			}
		}
	}
	if hasInput {
		text("view.submit", a.View.Submit, 24)
	}
	if len(a.View.Blocks) == 0 || len(a.View.Blocks) > 100 {
		problems = append(problems, fmt.Sprintf("view.blocks: %d, want 1..100", len(a.View.Blocks)))
	}
	if len(a.View.PrivateMetadata) > 3000 {
		problems = append(problems, "view.private_metadata: more than 3000 characters")
	}
	if len(a.View.CallbackID) > 255 {
		problems = append(problems, "view.callback_id: more than 255 characters")
	}
	if len(problems) > 0 {
		fail(w, "invalid_arguments", problems...)
		return
	}
	s.mu.Lock()
	s.seq++
	v.ID = "V" + strconv.Itoa(s.seq)
	s.mu.Unlock()
	s.Opened <- v
	reply(w, map[string]any{"ok": true, "view": map[string]any{"id": v.ID, "type": "modal", "callback_id": v.CallbackID}})
}

// Submit returns the body Slack posts when u submits view v with values:
// a view_submission payload whose state holds, per block id and action
// id, the element's value ({"type": …, "value": …} for a text input,
// "selected_option" or "selected_options" for option elements).
func (s *Server) Submit(v View, u User, values map[string]map[string]any) ([]byte, error) {
	if u.TeamID == "" {
		u.TeamID = "T0FAKE"
	}
	if values == nil {
		values = map[string]map[string]any{}
	}
	payload := map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": u.TeamID, "domain": "fake"},
		"user":       u,
		"api_app_id": "A0FAKE",
		"token":      "deprecated-verification-token",
		"trigger_id": "1337.43." + v.ID,
		"view": map[string]any{
			"id": v.ID, "team_id": u.TeamID, "type": "modal", "callback_id": v.CallbackID,
			"private_metadata": v.PrivateMetadata, "blocks": v.Blocks, "hash": "1700000002.abc",
			"state": map[string]any{"values": values},
		},
		"response_urls": []any{},
	}
	return EncodePayload(payload)
}
