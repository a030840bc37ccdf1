package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Modals: a Deny button opens a form for feedback to the agent, an
// ask-user question's Answer button opens a form with the agent's questions
// and their options, and Edit & approve… opens the editor (modal.go)
// (https://docs.slack.dev/surfaces/modals). Every form's submission (a
// view_submission interaction) goes through parseSubmission, which
// dispatches by callback id; its private metadata says which question and
// message it belongs to.

// actionAnswer is the Answer button of an ask-user question.
const actionAnswer = "signoff_answer"

// Callback ids of the channel's modals.
const (
	callbackReject = "signoff_reject"
	callbackAnswer = "signoff_answer"
	// callbackEdit (modal.go) is the editor's.
)

// Limits of modals and their elements, as documented by Slack.
const (
	maxModalTitle   = 24
	maxInputLabel   = 2000
	maxOptionText   = 75
	maxListOptions  = 10 // radio_buttons and checkboxes; selects take 100
	maxInputChars   = 3000
	maxPrivateMeta  = 3000
	modalInputBlock = "input"
)

// modalMeta is a modal's private_metadata: the question and the message
// (and the response_url of the click that opened it, to reply through).
type modalMeta struct {
	RequestID   string `json:"r"`
	Action      string `json:"a"`
	Channel     string `json:"c,omitempty"`
	TS          string `json:"t,omitempty"`
	ResponseURL string `json:"u,omitempty"`
}

type viewsOpenReq struct {
	TriggerID string `json:"trigger_id"`
	View      modal  `json:"view"`
}

type modal struct {
	Type            string      `json:"type"` // modal
	CallbackID      string      `json:"callback_id,omitempty"`
	Title           *textObject `json:"title"`
	Submit          *textObject `json:"submit,omitempty"`
	Close           *textObject `json:"close,omitempty"`
	PrivateMetadata string      `json:"private_metadata,omitempty"`
	Blocks          []any       `json:"blocks"`
}

type inputBlock struct {
	Type     string      `json:"type"` // input
	BlockID  string      `json:"block_id"`
	Label    *textObject `json:"label"`
	Element  any         `json:"element"`
	Optional bool        `json:"optional,omitempty"`
	Hint     *textObject `json:"hint,omitempty"`
}

type textInput struct {
	Type         string      `json:"type"` // plain_text_input
	ActionID     string      `json:"action_id"`
	Multiline    bool        `json:"multiline,omitempty"`
	InitialValue string      `json:"initial_value,omitempty"`
	MaxLength    int         `json:"max_length,omitempty"`
	Placeholder  *textObject `json:"placeholder,omitempty"`
}

type optionElement struct {
	Type     string       `json:"type"` // radio_buttons, checkboxes, static_select, multi_static_select
	ActionID string       `json:"action_id"`
	Options  []optionItem `json:"options"`
}

type optionItem struct {
	Text        *textObject `json:"text"`
	Value       string      `json:"value"`
	Description *textObject `json:"description,omitempty"`
}

// opensModal reports whether a click on action opens a modal.
func opensModal(action string) bool {
	return action == actionAnswer || action == actionDeny || action == actionDenyStop
}

// modalChoice is the choice a modal's button leads to (an answer approves
// once), to check it is offered before the form opens.
func modalChoice(action string) approverbot.Choice {
	if action == actionAnswer {
		return approverbot.ChoiceOnce
	}
	return choiceOf[action]
}

// openModal opens the modal of a click: feedback for a Deny, the answer
// form for Answer. It returns an error when Slack would not open it (no
// trigger, an expired one, Slack unreachable).
func (c *Channel) openModal(ctx context.Context, q approverbot.Question, k click) error {
	if k.triggerID == "" {
		return errors.New("the click carries no trigger_id")
	}
	meta, err := json.Marshal(modalMeta{RequestID: k.requestID, Action: k.action, Channel: k.channel, TS: k.ts, ResponseURL: k.responseURL})
	if err != nil {
		return err
	}
	if len(meta) > maxPrivateMeta {
		// Without the response_url the reply goes as an ephemeral message.
		meta, _ = json.Marshal(modalMeta{RequestID: k.requestID, Action: k.action, Channel: k.channel, TS: k.ts})
	}
	var v modal
	if k.action == actionAnswer {
		v = answerModal(q)
	} else {
		v = rejectModal(q, k.action)
	}
	v.Type, v.PrivateMetadata, v.Close = "modal", string(meta), plain("Cancel")
	return c.api.call(ctx, "views.open", viewsOpenReq{TriggerID: k.triggerID, View: v}, &apiStatus{})
}

func rejectModal(q approverbot.Question, action string) modal {
	title, what := "Deny", "The agent skips this call and goes on; it reads your feedback."
	if action == actionDenyStop {
		title, what = "Deny & stop", "The agent skips this call and ends its turn; it reads your feedback."
	}
	tool := q.Request.Tool
	if tool == "" {
		tool = "this call"
	}
	return modal{CallbackID: callbackReject, Title: plain(title), Submit: plain(title),
		Blocks: []any{
			sectionBlock{Type: "section", Text: plain(clip("Deny "+card.OneLine(tool)+" ("+q.Request.RequestID+"). "+what, maxSectionText))},
			inputBlock{Type: modalInputBlock, BlockID: "feedback", Label: plain("Feedback for the agent"), Optional: true,
				Element: textInput{Type: "plain_text_input", ActionID: "text", Multiline: true, MaxLength: maxInputChars,
					Placeholder: plain("What should it do instead? (optional)")}},
		}}
}

func answerModal(q approverbot.Question) modal {
	v := approverbot.Present(q, limits)
	m := modal{CallbackID: callbackAnswer, Title: plain("Answer the agent"), Submit: plain("Send answer")}
	m.Blocks = append(m.Blocks, sectionBlock{Type: "section", Text: plain(clip(card.OneLine(q.Request.Tool)+
		" asks you; your answer is its result (it approves the call once).", maxSectionText))})
	if v.Ask == nil || len(v.Ask.Questions) == 0 {
		m.Blocks = append(m.Blocks, inputBlock{Type: modalInputBlock, BlockID: "t0", Label: plain("Your answer"),
			Element: textInput{Type: "plain_text_input", ActionID: "text", Multiline: true, MaxLength: maxInputChars}})
		if v.Args != "" {
			m.Blocks = append(m.Blocks[:1], append([]any{sectionBlock{Type: "section", Text: plain(clip(v.Args, maxSectionText))}}, m.Blocks[1:]...)...)
		}
		return m
	}
	for i, aq := range v.Ask.Questions {
		label := aq.Question
		if aq.Header != "" {
			label = aq.Header + ": " + label
		}
		n := strconv.Itoa(i)
		if len(aq.Options) > 0 {
			el := optionElement{ActionID: "pick"}
			list := len(aq.Options) <= maxListOptions
			switch {
			case aq.MultiSelect && list:
				el.Type = "checkboxes"
			case aq.MultiSelect:
				el.Type = "multi_static_select"
			case list:
				el.Type = "radio_buttons"
			default:
				el.Type = "static_select"
			}
			// Each option numbered as the message numbers it; when a
			// label does not fit an option's 75 characters, every label is
			// listed whole above the picker, so two that begin alike are
			// told apart by their numbers (red team AL F6: "… staging
			// only (billing-stg-eu-…" twice, one of them "and then on
			// prod").
			var whole []string
			clipped := false
			for j, o := range aq.Options {
				num := strconv.Itoa(j+1) + ". "
				text := num + o.Label
				if utf8.RuneCountInString(text) > maxOptionText {
					clipped = true
				}
				whole = append(whole, text)
				it := optionItem{Text: plain(clip(text, maxOptionText)), Value: strconv.Itoa(j)}
				if o.Description != "" && list {
					it.Description = plain(clip(o.Description, maxOptionText))
				}
				el.Options = append(el.Options, it)
			}
			if clipped {
				m.Blocks = append(m.Blocks, sectionBlock{Type: "section", Text: plain(clip("The options, whole:\n"+strings.Join(whole, "\n"), maxSectionText))})
			}
			m.Blocks = append(m.Blocks, inputBlock{Type: modalInputBlock, BlockID: "q" + n, Label: plain(clip(label, maxInputLabel)),
				Element: el, Optional: true})
			label = "Other: your own words"
		}
		m.Blocks = append(m.Blocks, inputBlock{Type: modalInputBlock, BlockID: "t" + n, Label: plain(clip(label, maxInputLabel)),
			Optional: len(aq.Options) > 0, Element: textInput{Type: "plain_text_input", ActionID: "text", MaxLength: maxInputChars}})
	}
	return m
}

// viewSubmission is the part of a view_submission payload the channel
// reads (https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload).
type viewSubmission struct {
	View struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		State           struct {
			Values map[string]map[string]stateValue `json:"values"`
		} `json:"state"`
	} `json:"view"`
}

type stateValue struct {
	Type            string          `json:"type"`
	Value           *string         `json:"value"`
	SelectedOption  *selectedValue  `json:"selected_option"`
	SelectedOptions []selectedValue `json:"selected_options"`
}

type selectedValue struct {
	Value string `json:"value"`
}

// submission is a verified modal submission, queued like a click.
func parseSubmission(raw []byte, user string) (click, error) {
	var p viewSubmission
	if err := json.Unmarshal(raw, &p); err != nil {
		return click{}, fmt.Errorf("view_submission payload: %v", err)
	}
	var meta modalMeta
	if err := json.Unmarshal([]byte(p.View.PrivateMetadata), &meta); err != nil {
		return click{}, fmt.Errorf("view_submission: private_metadata is not the channel's: %v", err)
	}
	if err := messages.ValidateToken("private_metadata request id", meta.RequestID); err != nil {
		return click{}, fmt.Errorf("view_submission: %v", err)
	}
	k := click{user: user, action: meta.Action, requestID: meta.RequestID, channel: meta.Channel, ts: meta.TS,
		responseURL: meta.ResponseURL, submitted: true}
	switch {
	case p.View.CallbackID == callbackReject && (meta.Action == actionDeny || meta.Action == actionDenyStop):
		if v := p.View.State.Values["feedback"]["text"].Value; v != nil {
			k.feedback = strings.TrimSpace(*v)
		}
		if len(k.feedback) > messages.MaxFeedbackBytes {
			return click{}, &formError{block: "feedback", msg: "Feedback is too long: at most " + strconv.Itoa(messages.MaxFeedbackBytes) + " bytes."}
		}
	case p.View.CallbackID == callbackAnswer && meta.Action == actionAnswer:
		for block, actions := range p.View.State.Values {
			if len(block) < 2 || (block[0] != 'q' && block[0] != 't') {
				continue
			}
			i, err := strconv.Atoi(block[1:])
			if err != nil || i < 0 || i >= messages.MaxAskQuestions {
				continue
			}
			pick := approverbot.Pick{Question: i}
			if sv, ok := actions["pick"]; ok {
				sel := sv.SelectedOptions
				if sv.SelectedOption != nil {
					sel = append(sel, *sv.SelectedOption)
				}
				for _, s := range sel {
					o, err := strconv.Atoi(s.Value)
					if err != nil {
						return click{}, fmt.Errorf("view_submission: option value %q is not the channel's", card.Clip(s.Value, 20))
					}
					pick.Options = append(pick.Options, o)
				}
			}
			if sv, ok := actions["text"]; ok && sv.Value != nil {
				pick.Text = *sv.Value
			}
			if len(pick.Options) > 0 || strings.TrimSpace(pick.Text) != "" {
				k.picks = append(k.picks, pick)
			}
		}
	case p.View.CallbackID == callbackEdit && meta.Action == actionEdit:
		// The editor's text; an empty or missing one is refused by the
		// core (approverbot.ParseEdit), under the input.
		if v := p.View.State.Values[editBlock][editInput].Value; v != nil {
			k.edited = *v
		}
	default:
		return click{}, fmt.Errorf("unknown view callback_id %q", card.Clip(p.View.CallbackID, 64))
	}
	return k, nil
}

// formError is a problem with what was typed in a modal: Slack shows msg
// under the block.
type formError struct{ block, msg string }

func (e *formError) Error() string { return e.msg }

// checkAnswerForm builds the answer of a submitted answer form now, so that
// a mistake shows in the form (Slack waits 3 seconds for the reply).
func checkAnswerForm(r approverbot.Responder, k *click) error {
	q, ok := r.Lookup(k.requestID)
	if !ok {
		return &formError{block: "t0", msg: approverbot.NotSentText(fmt.Errorf("%w: %s", approverbot.ErrUnknownQuestion, k.requestID))}
	}
	raw, err := approverbot.AnswerOf(q, k.picks)
	if err != nil {
		block := "t0"
		if q.AskUser != nil && len(q.AskUser.Questions) > 0 && len(q.AskUser.Questions[0].Options) > 0 {
			block = "q0"
		}
		return &formError{block: block, msg: approverbot.NotSentText(err)}
	}
	k.answer = raw
	return nil
}

// handleSubmission sends a submitted form's answer or rejection.
func (c *Channel) handleSubmission(ctx context.Context, r approverbot.Responder, log *slog.Logger, q approverbot.Question, appr approverbot.Approver, k click) approverbot.Submission {
	device := "slack user " + k.user
	if k.action == actionAnswer {
		return approverbot.SubmitAnswer(ctx, r, log, q, k.answer, appr.ID, Name, device)
	}
	return approverbot.Submit(ctx, r, log, q, choiceOf[k.action], appr.ID, Name, device, k.feedback)
}
