package card

import (
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// askView is the questions clipped to l for showing; indexes match the
// question's, so a pick (approverbot.Pick) made on the view names the
// same question and option.
func askView(ask *messages.AskUser, l Limits) *messages.AskUser {
	if ask == nil {
		return nil
	}
	out := &messages.AskUser{Questions: make([]messages.AskQuestion, len(ask.Questions))}
	for i, q := range ask.Questions {
		v := messages.AskQuestion{Question: ClipWidth(q.Question, l.Prose, l.Width), Header: ClipWidth(q.Header, l.Command, l.Width),
			MultiSelect: q.MultiSelect, Options: make([]messages.AskOption, len(q.Options))}
		for j, o := range q.Options {
			v.Options[j] = messages.AskOption{Label: ClipWidth(o.Label, l.Command, l.Width), Description: ClipWidth(o.Description, l.Prose, l.Width)}
		}
		out.Questions[i] = v
	}
	return out
}

// AskLines lays out an ask-user question's questions as plain text, one
// line each, numbered for a person to pick by number: "Question 1 (DB,
// pick one): Which database?", "  1. Postgres — relational". nil when v
// asks for no answer.
func (v View) AskLines() []string {
	if v.Ask == nil {
		return nil
	}
	if len(v.Ask.Questions) == 0 {
		return []string{"The agent asks for an answer in your own words."}
	}
	var out []string
	for i, q := range v.Ask.Questions {
		head := "Question " + strconv.Itoa(i+1)
		var notes []string
		if q.Header != "" {
			notes = append(notes, q.Header)
		}
		switch {
		case len(q.Options) == 0:
			notes = append(notes, "free text")
		case q.MultiSelect:
			notes = append(notes, "pick any")
		default:
			notes = append(notes, "pick one")
		}
		out = append(out, head+" ("+strings.Join(notes, ", ")+"): "+q.Question)
		for j, o := range q.Options {
			line := "  " + strconv.Itoa(j+1) + ". " + o.Label
			if o.Description != "" {
				line += " — " + o.Description
			}
			out = append(out, line)
		}
	}
	return out
}
