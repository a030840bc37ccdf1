package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Approve with changes on Slack: the question's "Edit & approve…" button
// opens a modal (views.open, with the click's trigger_id) holding a
// plain_text_input with the call's command, or its arguments as JSON. Its
// view_submission is answered within Slack's 3 seconds: a text that is no
// valid edit, or one the brokers refuse (the policy denies the changed
// call), comes back as the input's error (response_action "errors") and
// the modal stays open to fix it; an applied one turns the modal into the
// outcome (response_action "update").
// https://docs.slack.dev/reference/methods/views.open,
// https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload

const (
	// actionEdit is the button that opens the editor.
	actionEdit = "signoff_edit"
	// editCallback is the modal's callback_id.
	editCallback = "signoff_edit"
	// editBlock and editInput name the modal's input block and element:
	// view.state.values[editBlock][editInput].value is the text.
	editBlock = "signoff_edit_text"
	editInput = "text"
	// maxInputChars is Slack's limit of a plain_text_input (max_length):
	// a longer call cannot be edited in Slack.
	maxInputChars = 3000
	// submitBudget bounds the brokers' round trip of a submission: Slack
	// waits 3 seconds for the reply that closes or updates the modal.
	submitBudget = 2500 * time.Millisecond
)

// editButton is the button that opens the editor, for a question that
// offers editing; nil for one that does not (a quorum question).
func editButton(q approverbot.Question) *button {
	if approverbot.EditOffered(q, "") != nil {
		return nil
	}
	return &button{Type: "button", Text: plain("Edit & approve…"), ActionID: actionEdit, Value: q.Request.RequestID}
}

// editMeta is the modal's private_metadata: which question, and the
// message it was opened from.
type editMeta struct {
	RequestID string `json:"request_id"`
	Channel   string `json:"channel,omitempty"`
	TS        string `json:"ts,omitempty"`
}

// The modal as views.open takes it.
type (
	viewsOpenReq struct {
		TriggerID string    `json:"trigger_id"`
		View      modalView `json:"view"`
	}
	modalView struct {
		Type            string      `json:"type"` // modal
		CallbackID      string      `json:"callback_id,omitempty"`
		Title           *textObject `json:"title"`
		Submit          *textObject `json:"submit,omitempty"`
		Close           *textObject `json:"close,omitempty"`
		PrivateMetadata string      `json:"private_metadata,omitempty"`
		Blocks          []any       `json:"blocks"`
	}
	inputBlock struct {
		Type    string         `json:"type"` // input
		BlockID string         `json:"block_id"`
		Label   *textObject    `json:"label"`
		Hint    *textObject    `json:"hint,omitempty"`
		Element plainTextInput `json:"element"`
	}
	plainTextInput struct {
		Type         string `json:"type"` // plain_text_input
		ActionID     string `json:"action_id"`
		Multiline    bool   `json:"multiline"`
		InitialValue string `json:"initial_value,omitempty"`
		MaxLength    int    `json:"max_length,omitempty"`
	}
	sectionText struct {
		Type string      `json:"type"` // section
		Text *textObject `json:"text"`
	}
)

// openEditor answers a click on actionEdit: it opens the modal for the
// question, or tells the user why it cannot.
func (c *Channel) openEditor(ctx context.Context, r approverbot.Responder, k click, approver string) {
	log := c.log.With("request_id", k.requestID, "slack_user", k.user)
	q, ok := r.Lookup(k.requestID)
	switch {
	case !ok:
		c.tell(ctx, k, approverbot.NotSentText(fmt.Errorf("%w: %s", approverbot.ErrUnknownQuestion, k.requestID)))
		return
	case !q.Open():
		c.tell(ctx, k, "Already decided by "+approverbot.DecidedBy(q.Resolved.Decision)+": nothing to edit.")
		return
	}
	if err := approverbot.EditOffered(q, approver); err != nil {
		c.tell(ctx, k, approverbot.NotSentText(err))
		return
	}
	if k.triggerID == "" {
		c.tell(ctx, k, "Slack sent no trigger to open the editor with; click Edit & approve… again.")
		return
	}
	d := approverbot.DraftOf(q)
	if utf8.RuneCountInString(d.Text) > maxInputChars {
		c.tell(ctx, k, fmt.Sprintf("This call is too long to edit in Slack (more than %d characters): approve or deny it here, or edit it on the web page or the terminal.", maxInputChars))
		return
	}
	meta, _ := json.Marshal(editMeta{RequestID: q.Request.RequestID, Channel: k.channel, TS: k.ts})
	label := "Command to run instead"
	hint := "The policy judges the changed call again; approving it runs it once."
	if !d.Shell {
		label = "Arguments to run with (JSON object)"
	}
	v := approverbot.Present(q, limits)
	view := modalView{
		Type: "modal", CallbackID: editCallback,
		Title: plain("Approve with changes"), Submit: plain("Approve changed call"), Close: plain("Cancel"),
		PrivateMetadata: string(meta),
		Blocks: []any{
			sectionText{Type: "section", Text: mrkdwn(clip(escapeMrkdwn("*"+v.Tool+"* for agent "+v.AgentID+", session "+v.SessionID), maxSectionText))},
			inputBlock{Type: "input", BlockID: editBlock, Label: plain(label), Hint: plain(hint),
				Element: plainTextInput{Type: "plain_text_input", ActionID: editInput, Multiline: true, InitialValue: d.Text, MaxLength: maxInputChars}},
		},
	}
	if err := c.api.call(ctx, "views.open", viewsOpenReq{TriggerID: k.triggerID, View: view}, nil); err != nil {
		log.Warn("could not open the editor", "err", err)
		c.tell(ctx, k, "Could not open the editor ("+err.Error()+"): nothing was sent.")
	}
}

// submissionPayload is the part of a view_submission payload the channel
// reads.
type submissionPayload struct {
	Type string `json:"type"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
	View struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		State           struct {
			Values map[string]map[string]struct {
				Type  string  `json:"type"`
				Value *string `json:"value"`
			} `json:"values"`
		} `json:"state"`
	} `json:"view"`
}

// submissionReply is the body that answers a view_submission.
type submissionReply struct {
	ResponseAction string            `json:"response_action"`
	Errors         map[string]string `json:"errors,omitempty"`
	View           *modalView        `json:"view,omitempty"`
}

// maxErrorChars bounds an input's error text in the modal.
const maxErrorChars = 1000

// serveSubmission answers a view_submission of the editor at once: the
// answer goes to the brokers within submitBudget, and the reply keeps the
// modal open with the problem, or turns it into the outcome.
func (c *Channel) serveSubmission(w http.ResponseWriter, r *http.Request, raw string) {
	var p submissionPayload
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		http.Error(w, "slack interaction: payload is not valid JSON", http.StatusBadRequest)
		return
	}
	var meta editMeta
	if p.View.CallbackID != editCallback || json.Unmarshal([]byte(p.View.PrivateMetadata), &meta) != nil ||
		messages.ValidateToken("request id", meta.RequestID) != nil || messages.ValidateToken("user.id", p.User.ID) != nil {
		c.log.Warn("refused a view_submission that is not Signoff's editor", "callback_id", approverbot.Clip(p.View.CallbackID, 64))
		http.Error(w, "slack interaction: not a Signoff view", http.StatusBadRequest)
		return
	}
	box := c.responder.Load()
	if box == nil || !c.running.Load() {
		writeSubmission(w, fieldError("The approver bot is starting: try again in a moment. Nothing was sent."))
		return
	}
	resp := box.r
	field, ok := p.View.State.Values[editBlock][editInput]
	text := ""
	if ok && field.Value != nil {
		text = *field.Value
	}
	log := c.log.With("request_id", meta.RequestID, "slack_user", p.User.ID)
	appr, ok := resp.Approver(Name, p.User.ID)
	if !ok {
		log.Warn("edit from a Slack user that is not a configured approver")
		writeSubmission(w, fieldError("You are not a configured approver (Slack user "+p.User.ID+"): nothing was sent."))
		return
	}
	q, ok := resp.Lookup(meta.RequestID)
	if !ok {
		writeSubmission(w, fieldError(approverbot.NotSentText(fmt.Errorf("%w: %s", approverbot.ErrUnknownQuestion, meta.RequestID))))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), submitBudget)
	defer cancel()
	o := approverbot.SubmitEdited(ctx, resp, log, q, approverbot.ChoiceOnce, approverbot.DraftOf(q), text, appr.ID, Name, "slack user "+p.User.ID, "")
	if !o.Applied {
		// Not sent, refused by the brokers, or not confirmed: the modal
		// stays, with why (an unconfirmed answer's outcome shows on the
		// message once it is settled).
		writeSubmission(w, fieldError(o.Text))
		return
	}
	done := modalView{Type: "modal", Title: plain("Approve with changes"), Close: plain("Close"),
		Blocks: []any{sectionText{Type: "section", Text: plain(clip(o.Text, maxSectionText))}}}
	writeSubmission(w, submissionReply{ResponseAction: "update", View: &done})
	if o.Settled != nil && meta.Channel != "" && meta.TS != "" {
		if err := c.showSettled(ctx, meta.Channel, meta.TS, q, *o.Settled); err != nil {
			log.Warn("could not update the settled question's message", "err", err)
		}
	}
}

// fieldError is the reply that shows text under the editor's input.
func fieldError(text string) submissionReply {
	return submissionReply{ResponseAction: "errors", Errors: map[string]string{editBlock: clip(text, maxErrorChars)}}
}

func writeSubmission(w http.ResponseWriter, v submissionReply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}

// interactionType reads the type of an interaction payload.
func interactionType(raw string) (string, error) {
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "", errors.New("payload is not valid JSON")
	}
	return p.Type, nil
}
