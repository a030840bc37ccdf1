package slack

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestAnswerModalFitsSlacksLimits(t *testing.T) {
	var opts []any
	for i := range 14 {
		opts = append(opts, map[string]any{"label": "option " + strconv.Itoa(i) + " " + strings.Repeat("x", 100), "description": strings.Repeat("d", 200)})
	}
	args, _ := json.Marshal(map[string]any{"questions": []any{
		map[string]any{"question": strings.Repeat("Which? ", 400), "options": opts},
		map[string]any{"question": "Several?", "options": opts, "multiSelect": true},
		map[string]any{"question": "Words only?"},
	}})
	ask := messages.ParseAskUser(args)
	q := approverbot.Question{}
	q.Request.RequestID, q.Request.Tool, q.Request.Arguments = "r1", "AskUserQuestion", args
	q.AskUser = &ask
	m := answerModal(q)
	var got []string
	for _, b := range m.Blocks {
		in, ok := b.(inputBlock)
		if !ok {
			continue
		}
		kind := "text"
		if el, ok := in.Element.(optionElement); ok {
			kind = el.Type
			for _, o := range el.Options {
				if n := len([]rune(o.Text.Text)); n > maxOptionText {
					t.Errorf("%s: an option of %d characters", in.BlockID, n)
				}
				if o.Description != nil {
					t.Errorf("%s: a select's option has a description (only radio buttons and checkboxes take one)", in.BlockID)
				}
			}
		}
		if n := len([]rune(in.Label.Text)); n > maxInputLabel {
			t.Errorf("%s: a label of %d characters", in.BlockID, n)
		}
		got = append(got, in.BlockID+":"+kind)
	}
	// Beyond 10 options the lists become menus; a question without
	// options is a required text box.
	if want := "q0:static_select t0:text q1:multi_static_select t1:text t2:text"; strings.Join(got, " ") != want {
		t.Errorf("inputs %s, want %s", strings.Join(got, " "), want)
	}
	if len([]rune(m.Title.Text)) > maxModalTitle || len([]rune(m.Submit.Text)) > maxModalTitle {
		t.Errorf("title %q or submit %q too long", m.Title.Text, m.Submit.Text)
	}
}

// TestAnswerOptionsAreNumberedAndListedWholeWhenClipped (red team AL F6):
// two options that begin alike and are clipped alike are told apart: each
// is numbered, and when one does not fit, every label is listed whole
// above the picker.
func TestAnswerOptionsAreNumberedAndListedWholeWhenClipped(t *testing.T) {
	a := "Yes, run the schema migration on the staging cluster only (billing-stg-eu-1) and stop"
	b := "Yes, run the schema migration on the staging cluster only (billing-stg-eu-1) and then on prod"
	args, _ := json.Marshal(map[string]any{"questions": []any{map[string]any{"question": "Which?", "header": "Migrate",
		"options": []any{map[string]any{"label": a}, map[string]any{"label": b}}}}})
	ask := messages.ParseAskUser(args)
	q := approverbot.Question{}
	q.Request.RequestID, q.Request.Tool, q.Request.Arguments = "r1", "AskUserQuestion", args
	q.AskUser = &ask
	m := answerModal(q)
	var listed string
	var texts []string
	for _, blk := range m.Blocks {
		switch x := blk.(type) {
		case sectionBlock:
			listed += x.Text.Text
		case inputBlock:
			if el, ok := x.Element.(optionElement); ok {
				for _, o := range el.Options {
					texts = append(texts, o.Text.Text)
				}
			}
		}
	}
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "1. ") || !strings.HasPrefix(texts[1], "2. ") {
		t.Errorf("the options are not numbered: %q", texts)
	}
	if !strings.Contains(listed, "1. "+a) || !strings.Contains(listed, "2. "+b) {
		t.Errorf("the clipped options are not listed whole: %q", listed)
	}
}
