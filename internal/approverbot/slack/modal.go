package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Approve with changes on Slack: the question's "Edit & approve…" button
// opens a modal (views.open, with the click's trigger_id) holding a
// plain_text_input with the call's command, or its arguments as JSON. Its
// view_submission goes through the channel's one modal dispatcher
// (parseSubmission, by callback id) and is answered within Slack's 3
// seconds: a text that is no valid edit, or one the brokers refuse (the
// policy denies the changed call), comes back as the input's error
// (response_action "errors") and the modal stays open to fix it; an
// applied one turns the modal into the outcome (response_action "update").
// https://docs.slack.dev/reference/methods/views.open,
// https://docs.slack.dev/reference/interaction-payloads/view-interactions-payload

const (
	// actionEdit is the button that opens the editor.
	actionEdit = "signoff_edit"
	// callbackEdit is the editor modal's callback_id.
	callbackEdit = "signoff_edit"
	// editBlock and editInput name the modal's input block and element:
	// view.state.values[editBlock][editInput].value is the text.
	editBlock = "signoff_edit_text"
	editInput = "text"
	// submitBudget bounds the brokers' round trip of a submission: Slack
	// waits 3 seconds for the reply that closes or updates the modal.
	submitBudget = 2500 * time.Millisecond
	// maxErrorChars bounds an input's error text in the modal.
	maxErrorChars = 1000
)

// editButton is the button that opens the editor, for a question that
// offers editing; nil for one that does not (a quorum question, an
// ask-user question).
func editButton(q approverbot.Question) *button {
	if approverbot.EditOffered(q, "") != nil {
		return nil
	}
	return &button{Type: "button", Text: plain("Edit & approve…"), ActionID: actionEdit, Value: q.Request.RequestID}
}

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
	meta, err := json.Marshal(modalMeta{RequestID: q.Request.RequestID, Action: actionEdit, Channel: k.channel, TS: k.ts})
	if err != nil {
		c.tell(ctx, k, "Could not open the editor ("+err.Error()+"): nothing was sent.")
		return
	}
	label := "Command to run instead"
	hint := "The policy judges the changed call again; approving it runs it once."
	if !d.Shell {
		label = "Arguments to run with (JSON object)"
	}
	// Slack's box scrolls and shows a few lines: the label says how many
	// there are, so that an edit of the first is not made unaware of the
	// rest (red team AG F3).
	lines := strings.Count(d.Text, "\n") + 1
	if lines > 1 {
		label += fmt.Sprintf(" (%d lines: scroll to read them all)", lines)
	}
	v := approverbot.Present(q, limits)
	view := modal{
		Type: "modal", CallbackID: callbackEdit,
		Title: plain("Approve with changes"), Submit: plain("Approve changed call"), Close: plain("Cancel"),
		PrivateMetadata: string(meta),
		Blocks: []any{
			sectionBlock{Type: "section", Text: mrkdwn(clip(escapeMrkdwn("*"+v.Tool+"* for agent "+v.AgentID+", session "+v.SessionID), maxSectionText))},
			inputBlock{Type: modalInputBlock, BlockID: editBlock, Label: plain(label), Hint: plain(hint),
				Element: textInput{Type: "plain_text_input", ActionID: editInput, Multiline: true, InitialValue: d.Text, MaxLength: maxInputChars}},
		},
	}
	if err := c.api.call(ctx, "views.open", viewsOpenReq{TriggerID: k.triggerID, View: view}, &apiStatus{}); err != nil {
		log.Warn("could not open the editor", "err", err)
		c.tell(ctx, k, "Could not open the editor ("+err.Error()+"): nothing was sent.")
	}
}

// submissionReply is the body that answers a view_submission.
type submissionReply struct {
	ResponseAction string            `json:"response_action"`
	Errors         map[string]string `json:"errors,omitempty"`
	View           *modal            `json:"view,omitempty"`
}

// serveEdit answers a submitted editor k (from parseSubmission) at once:
// the answer goes to the brokers within submitBudget, and the reply keeps
// the modal open with the problem, or turns it into the outcome.
func (c *Channel) serveEdit(w http.ResponseWriter, r *http.Request, resp approverbot.Responder, k click) {
	log := c.log.With("request_id", k.requestID, "slack_user", k.user)
	appr, ok := resp.Approver(Name, k.user)
	if !ok {
		log.Warn("edit from a Slack user that is not a configured approver")
		writeSubmission(w, editError("You are not a configured approver (Slack user "+k.user+"): nothing was sent."))
		return
	}
	q, ok := resp.Lookup(k.requestID)
	if !ok {
		writeSubmission(w, editError(approverbot.NotSentText(fmt.Errorf("%w: %s", approverbot.ErrUnknownQuestion, k.requestID))))
		return
	}
	if why := notWhole(resp, k); why != "" {
		log.Warn("edit refused: the question is too long for Slack")
		writeSubmission(w, editError("Nothing was sent. "+why))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), submitBudget)
	defer cancel()
	o := approverbot.SubmitEdited(ctx, resp, log, q, approverbot.ChoiceOnce, approverbot.DraftOf(q), k.edited, appr.ID, Name, "slack user "+k.user, "")
	if !o.Applied {
		// Not sent, refused by the brokers, or not confirmed: the modal
		// stays, with why (an unconfirmed answer's outcome shows on the
		// message once it is settled).
		writeSubmission(w, editError(o.Text))
		return
	}
	done := modal{Type: "modal", Title: plain("Approve with changes"), Close: plain("Close"),
		Blocks: []any{sectionBlock{Type: "section", Text: plain(clip(o.Text, maxSectionText))}}}
	writeSubmission(w, submissionReply{ResponseAction: "update", View: &done})
	if o.Settled != nil && k.channel != "" && k.ts != "" {
		if err := c.showSettled(ctx, k.channel, k.ts, q, *o.Settled); err != nil {
			log.Warn("could not update the settled question's message", "err", err)
		}
	}
}

// editError is the reply that shows text under the editor's input.
func editError(text string) submissionReply {
	return submissionReply{ResponseAction: "errors", Errors: map[string]string{editBlock: clip(text, maxErrorChars)}}
}

func writeSubmission(w http.ResponseWriter, v submissionReply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(v)
}
