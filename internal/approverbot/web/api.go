package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// questionsReply is GET /api/questions' reply.
type questionsReply struct {
	Questions []QuestionView `json:"questions"`
}

// handleQuestions serves GET /api/questions: the open questions the bot
// knows, oldest first. The brokers check team membership when an answer
// arrives, so every open question is listed.
func (c *Channel) handleQuestions(w http.ResponseWriter, r *http.Request) {
	p, ok := c.principal(r)
	if !ok {
		c.unauthorized(w, r)
		return
	}
	resp := c.responder()
	if resp == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the bot is starting; retry in a moment")
		return
	}
	out := questionsReply{Questions: []QuestionView{}}
	for _, q := range resp.Open() {
		if !c.sees(p, q) {
			continue
		}
		v, err := c.questionView(q, p.approver)
		if err != nil {
			c.log.Error("web: cannot render a question", "request_id", q.Request.RequestID, "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "cannot render question "+q.Request.RequestID)
			return
		}
		out.Questions = append(out.Questions, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// RespondRequest is POST /api/respond's body.
type RespondRequest struct {
	RequestID string `json:"request_id"`
	// Action is approve, session, always, reject_soft or reject_hard.
	Action   string `json:"action"`
	Feedback string `json:"feedback,omitempty"`
	// Device names the answering device; default: a label from the
	// User-Agent ("Chrome on Android").
	Device string `json:"device,omitempty"`
	// Edit approves with changes: the editor's text (the command of a
	// shell call, else the arguments as a JSON object). Approvals only.
	Edit *string `json:"edit,omitempty"`
	// Picks, with action "answer", answer an ask-user question: per
	// question (by index), the options picked (by index) and the text
	// typed.
	Picks []PickRequest `json:"picks,omitempty"`
	// StepUp, on an approval of a question that needs step-up, is the
	// authenticator's assertion (the PublicKeyCredential's JSON) for the
	// challenge POST /api/stepup/begin gave for this question.
	StepUp json.RawMessage `json:"step_up,omitempty"`
	// Digest is the digest of the card the answer was given on (its
	// data-digest); an answer naming another version of the question than
	// the open one is refused and not sent. The page always sends it;
	// a script should (GET /api/questions lists it).
	Digest string `json:"digest,omitempty"`
}

// actionAnswer is POST /api/respond's action for an answer to an ask-user
// question: an approval of the call carrying the answer Picks make.
const actionAnswer = "answer"

// PickRequest is one question's part of an answer.
type PickRequest struct {
	Question int    `json:"question"`
	Options  []int  `json:"options,omitempty"`
	Text     string `json:"text,omitempty"`
}

// RespondResult is POST /api/respond's reply: the broker's reply, plus a
// sentence for people.
type RespondResult struct {
	Applied           bool               `json:"applied"`
	State             messages.State     `json:"state"`
	Reason            string             `json:"reason,omitempty"`
	Decision          *messages.Decision `json:"decision,omitempty"`
	ApprovalsSoFar    []string           `json:"approvals_so_far,omitempty"`
	ApprovalsRequired int                `json:"approvals_required,omitempty"`
	Message           string             `json:"message"`
}

// handleRespond serves POST /api/respond.
func (c *Channel) handleRespond(w http.ResponseWriter, r *http.Request, p principal) {
	resp := c.responder()
	if resp == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the bot is starting; retry in a moment")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxRespondBody)
	var body RespondRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request",
			"the body must be JSON {request_id, action, feedback, device, edit}: "+err.Error())
		return
	}
	if body.RequestID == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "request_id is required")
		return
	}
	if len(body.Feedback) > messages.MaxFeedbackBytes {
		writeError(w, http.StatusBadRequest, "invalid_request", "feedback is too long (at most 4 KiB)")
		return
	}
	q, ok := resp.Lookup(body.RequestID)
	if !ok || !c.sees(p, q) {
		// A question of a team the approver does not answer for is as
		// unknown to them as one never asked.
		writeError(w, http.StatusNotFound, "not_found",
			"unknown question "+cleanLine(body.RequestID, 80)+" (never shown here, or settled long ago)")
		return
	}
	var ev *messages.StepUp
	if !isJSONNull(body.StepUp) {
		var err error
		if ev, err = c.verifyStepUp(p, q, body.StepUp); err != nil {
			c.recordPerson(r, messages.PersonStepUpFailed, p.approver, "webauthn", q.Request.RequestID+": "+err.Error())
			writeError(w, http.StatusForbidden, "step_up_required", err.Error())
			return
		}
		c.recordPerson(r, messages.PersonStepUp, p.approver, "webauthn", q.Request.RequestID+" with "+ev.CredentialID)
	}
	a, err := c.answerOf(q, body, p.approver, deviceLabel(body.Device, r.UserAgent()), ev)
	if errors.Is(err, approverbot.ErrStepUp) {
		writeError(w, http.StatusForbidden, "step_up_required", err.Error())
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	a.Identity = p.identity()
	a.Digest = body.Digest
	rep, err := resp.Respond(r.Context(), a)
	if err != nil {
		status, code := respondErrorStatus(err)
		c.log.Warn("web: answer refused", "request_id", body.RequestID, "approver", p.approver, "err", err)
		writeError(w, status, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, RespondResult{
		Applied:           rep.Applied,
		State:             rep.State,
		Reason:            rep.Reason,
		Decision:          rep.Decision,
		ApprovalsSoFar:    rep.ApprovalsSoFar,
		ApprovalsRequired: max(q.ApprovalsRequired, 1),
		Message:           replyMessage(rep, q.ApprovalsRequired),
	})
}

// respondErrorStatus maps an error of Responder.Respond to an HTTP status
// and error code.
func respondErrorStatus(err error) (int, string) {
	var re *messages.ReplyError
	switch {
	case errors.Is(err, approverbot.ErrUnknownQuestion), errors.Is(err, messages.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, approverbot.ErrStepUp):
		return http.StatusForbidden, "step_up_required"
	case errors.Is(err, approverbot.ErrUnknownApprover), errors.Is(err, messages.ErrForbidden):
		return http.StatusForbidden, "forbidden"
	case errors.Is(err, messages.ErrInvalid):
		return http.StatusBadRequest, "invalid_request"
	case errors.As(err, &re):
		return http.StatusBadGateway, string(re.Code)
	}
	return http.StatusBadGateway, "unavailable"
}

// strqs quotes a client value for an error message, shortened.
func strqs(s string) string { return `"` + cleanLine(s, 40) + `"` }

// answerOf turns a POST /api/respond body into the answer it stands for:
// a choice, or with action "answer" the answer its picks make.
func (c *Channel) answerOf(q approverbot.Question, body RespondRequest, approver, device string, ev *messages.StepUp) (approverbot.Answer, error) {
	if ev != nil && (body.Action == actionAnswer || body.Edit != nil) {
		return approverbot.Answer{}, fmt.Errorf("%w: a stepped-up approval is a plain approval on this page (no answer, no changes)", approverbot.ErrChoice)
	}
	if body.Action == actionAnswer {
		if body.Edit != nil {
			return approverbot.Answer{}, fmt.Errorf("%w: an answer is not approved with changes (edit goes with approve, session or always)", approverbot.ErrNoAnswer)
		}
		if body.Feedback != "" {
			return approverbot.Answer{}, fmt.Errorf("%w: feedback goes with a rejection; put words for the agent in the answer", approverbot.ErrNoAnswer)
		}
		picks := make([]approverbot.Pick, len(body.Picks))
		for i, p := range body.Picks {
			picks[i] = approverbot.Pick{Question: p.Question, Options: p.Options, Text: p.Text}
		}
		raw, err := approverbot.AnswerOf(q, picks)
		if err != nil {
			return approverbot.Answer{}, err
		}
		return approverbot.ChooseAnswer(q, raw, approver, c.Name(), device)
	}
	if len(body.Picks) > 0 {
		return approverbot.Answer{}, fmt.Errorf("%w: picks go with action answer", approverbot.ErrNoAnswer)
	}
	choice, err := approverbot.ParseChoice(body.Action)
	if err != nil {
		return approverbot.Answer{}, fmt.Errorf("action must be approve, session, always, reject_soft, reject_hard or answer, got %s", strqs(body.Action))
	}
	if body.Edit != nil {
		return editedAnswer(q, choice, *body.Edit, approver, c.Name(), device, body.Feedback)
	}
	if ev != nil {
		return approverbot.ChooseSteppedUp(q, choice, approver, c.Name(), device, body.Feedback, ev)
	}
	return approverbot.Choose(q, choice, approver, c.Name(), device, body.Feedback)
}
