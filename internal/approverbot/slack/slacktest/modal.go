package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// Modals, from Slack's documented formats: views.open
// (https://docs.slack.dev/reference/methods/views.open) takes a trigger_id
// from an interaction, valid for 3 seconds and once, and a modal view
// object (https://docs.slack.dev/reference/views/modal-views: title,
// submit and close at most 24 characters, submit required with input
// blocks, private_metadata at most 3000, callback_id at most 255, 100
// blocks); a plain_text_input's max_length is at most 3000. Submitting a
// modal posts a view_submission payload
// (https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload)
// whose view.state.values[block_id][action_id].value is the input.

// triggerTTL is how long a trigger_id can open a view.
const triggerTTL = 3 * time.Second

// View is a modal opened with views.open.
type View struct {
	TriggerID       string
	CallbackID      string
	PrivateMetadata string
	// Blocks are the view's blocks as sent.
	Blocks []json.RawMessage
	// Inputs are its plain_text_input elements, in order.
	Inputs []Input
}

// Input is a plain_text_input of a view.
type Input struct {
	BlockID, ActionID, Label, InitialValue string
	Multiline                              bool
	MaxLength                              int
}

type viewArgs struct {
	TriggerID string `json:"trigger_id"`
	View      struct {
		Type            string            `json:"type"`
		CallbackID      string            `json:"callback_id"`
		Title           *text             `json:"title"`
		Submit          *text             `json:"submit"`
		Close           *text             `json:"close"`
		PrivateMetadata string            `json:"private_metadata"`
		Blocks          []json.RawMessage `json:"blocks"`
	} `json:"view"`
}

type text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type inputBlock struct {
	Type    string `json:"type"`
	BlockID string `json:"block_id"`
	Label   *text  `json:"label"`
	Element struct {
		Type         string `json:"type"`
		ActionID     string `json:"action_id"`
		Multiline    bool   `json:"multiline"`
		InitialValue string `json:"initial_value"`
		MaxLength    int    `json:"max_length"`
	} `json:"element"`
}

// viewsOpen serves views.open.
func (s *Server) viewsOpen(w http.ResponseWriter, data []byte) {
	var a viewArgs
	if err := json.Unmarshal(data, &a); err != nil {
		fail(w, "invalid_json", err.Error())
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
	v, problems := checkView(a)
	if len(problems) > 0 {
		fail(w, "invalid_arguments", problems...)
		return
	}
	v.TriggerID = a.TriggerID
	s.Views <- v
	s.mu.Lock()
	s.seq++
	id := "V0FAKE" + strconv.Itoa(s.seq)
	s.mu.Unlock()
	reply(w, map[string]any{"ok": true, "view": map[string]any{"id": id, "type": "modal", "callback_id": v.CallbackID}})
}

// checkView applies the documented rules of a modal view.
func checkView(a viewArgs) (View, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	vw := a.View
	if vw.Type != "modal" {
		bad("view.type %q, want modal", vw.Type)
	}
	for name, t := range map[string]*text{"title": vw.Title, "submit": vw.Submit, "close": vw.Close} {
		switch {
		case t == nil && name == "title":
			bad("view.title is required")
		case t == nil:
		case t.Type != "plain_text":
			bad("view.%s must be plain_text", name)
		case t.Text == "" || utf8.RuneCountInString(t.Text) > 24:
			bad("view.%s is %d characters, want 1 to 24", name, utf8.RuneCountInString(t.Text))
		}
	}
	if n := utf8.RuneCountInString(vw.PrivateMetadata); n > 3000 {
		bad("view.private_metadata is %d characters, limit 3000", n)
	}
	if len(vw.CallbackID) > 255 {
		bad("view.callback_id is %d characters, limit 255", len(vw.CallbackID))
	}
	if len(vw.Blocks) > 100 {
		bad("view has %d blocks, limit 100", len(vw.Blocks))
	}
	v := View{CallbackID: vw.CallbackID, PrivateMetadata: vw.PrivateMetadata, Blocks: vw.Blocks}
	for i, raw := range vw.Blocks {
		var b inputBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			bad("view.blocks[%d]: %v", i, err)
			continue
		}
		if b.Type != "input" {
			continue
		}
		if vw.Submit == nil {
			bad("must define submit to use an input block [view.blocks[%d]]", i)
		}
		e := b.Element
		if e.Type != "plain_text_input" || e.ActionID == "" || b.BlockID == "" || b.Label == nil {
			bad("view.blocks[%d]: an input block needs block_id, label and a plain_text_input with action_id", i)
			continue
		}
		if e.MaxLength > 3000 {
			bad("view.blocks[%d].element.max_length %d, limit 3000", i, e.MaxLength)
		}
		if e.MaxLength > 0 && utf8.RuneCountInString(e.InitialValue) > e.MaxLength {
			bad("view.blocks[%d].element.initial_value is longer than max_length", i)
		}
		v.Inputs = append(v.Inputs, Input{BlockID: b.BlockID, ActionID: e.ActionID, Label: b.Label.Text,
			InitialValue: e.InitialValue, Multiline: e.Multiline, MaxLength: e.MaxLength})
	}
	return v, problems
}

// Submit returns the body Slack posts when u submits v with values: the
// new value of each input, by block id (inputs left out keep their
// initial value).
func (s *Server) Submit(v View, u User, values map[string]string) ([]byte, error) {
	state := map[string]any{}
	for _, in := range v.Inputs {
		val, ok := values[in.BlockID]
		if !ok {
			val = in.InitialValue
		}
		if in.MaxLength > 0 && utf8.RuneCountInString(val) > in.MaxLength {
			return nil, fmt.Errorf("slacktest: %d characters in %s, whose max_length is %d: Slack would not submit it", utf8.RuneCountInString(val), in.BlockID, in.MaxLength)
		}
		state[in.BlockID] = map[string]any{in.ActionID: map[string]any{"type": "plain_text_input", "value": val}}
	}
	if u.TeamID == "" {
		u.TeamID = "T0FAKE"
	}
	payload := map[string]any{
		"type":       "view_submission",
		"team":       map[string]any{"id": u.TeamID, "domain": "fake"},
		"user":       u,
		"api_app_id": "A0FAKE",
		"token":      "deprecated-verification-token",
		"trigger_id": "1337.43." + v.TriggerID,
		"view": map[string]any{
			"id": "V0FAKE", "team_id": u.TeamID, "type": "modal", "callback_id": v.CallbackID,
			"private_metadata": v.PrivateMetadata, "blocks": v.Blocks, "hash": "1700000002.abcd",
			"state": map[string]any{"values": state},
		},
		"response_urls": []any{},
	}
	return EncodePayload(payload)
}
