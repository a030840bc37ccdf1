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
