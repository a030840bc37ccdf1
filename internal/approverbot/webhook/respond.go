package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// RespondPath is where responses are posted.
const RespondPath = "/webhook/respond"

// maxRespondBytes bounds a response body.
const maxRespondBytes = 64 << 10

// RespondRequest is the body of a response (POST [RespondPath]).
type RespondRequest struct {
	RequestID string `json:"request_id"`
	// Approver is an approver id of the bot's config.
	Approver   string              `json:"approver"`
	Approved   bool                `json:"approved"`
	Scope      messages.Scope      `json:"scope,omitempty"`
	RejectMode messages.RejectMode `json:"reject_mode,omitempty"`
	Feedback   string              `json:"feedback,omitempty"`
	// Answer answers an ask-user question (its event carries ask_user):
	// a string, or {question: answer} keyed by the questions' texts. It
	// goes with approved true (an answer approves the call once).
	Answer json.RawMessage `json:"answer,omitempty"`
	// Device names the receiving system in the decision ("webhook" when
	// empty).
	Device string `json:"device,omitempty"`
	// UpdatedArguments approve the call with changes: the arguments (a
	// JSON object) the call runs with instead. Approvals only.
	UpdatedArguments json.RawMessage `json:"updated_arguments,omitempty"`
	// Digest is the digest of the approval_needed event the approver was
	// shown (its "digest"). Required with approved true: an approval
	// approves that version of the question and no other, and one naming
	// another is refused. Optional on a rejection.
	Digest string `json:"digest,omitempty"`
}

// respondBody is RespondRequest as decoded: approved must be present (the
// outer field takes "approved"; the embedded one stays unset).
type respondBody struct {
	RespondRequest
	Approved *bool `json:"approved"`
}

// Register implements [approverbot.HTTPChannel]: it serves POST
// [RespondPath].
func (c *Channel) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST "+RespondPath, c.serveRespond)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code messages.ErrorCode, format string, args ...any) {
	writeJSON(w, status, messages.NewErrorReply(code, fmt.Sprintf(format, args...)))
}

// serveRespond takes one signed response: it authenticates it, refuses a
// replay, checks the approver and sends the answer to the brokers.
func (c *Channel) serveRespond(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRespondBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, messages.CodeTooLarge, "body larger than %d bytes", mbe.Limit)
			return
		}
		writeError(w, http.StatusBadRequest, messages.CodeInvalidRequest, "cannot read the body")
		return
	}
	now := c.now()
	if err := Verify(c.secret, r.Header, body, now); err != nil {
		c.log.Warn("refused an unauthenticated response", "err", err, "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, messages.CodeForbidden, "%v", err)
		return
	}
	resp := c.responder.Get()
	if resp == nil {
		writeError(w, http.StatusServiceUnavailable, messages.CodeUnavailable, "the approver bot is starting; try again")
		return
	}
	if !c.replays.first(r.Header.Get(HeaderSignature), now) {
		c.log.Warn("refused a replayed response", "remote", r.RemoteAddr)
		writeError(w, http.StatusConflict, messages.CodeForbidden, "replayed request: this signature was already used; sign every request anew, retries too")
		return
	}
	var in respondBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeError(w, http.StatusBadRequest, messages.CodeInvalidRequest, "body is not a response object: %v", err)
		return
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, messages.CodeInvalidRequest, "body holds more than one JSON value")
		return
	}
	if err := checkBody(in); err != nil {
		writeError(w, http.StatusBadRequest, messages.CodeInvalidRequest, "%v", err)
		return
	}
	appr, ok := resp.Approver(Name, in.Approver)
	if !ok {
		c.log.Warn("response from an approver that is not configured", "approver", in.Approver, "request_id", in.RequestID)
		writeError(w, http.StatusForbidden, messages.CodeForbidden, "approver %q is not a configured approver", in.Approver)
		return
	}
	device := in.Device
	if device == "" {
		device = Name
	}
	q, ok := resp.Lookup(in.RequestID)
	if !ok {
		writeError(w, http.StatusNotFound, messages.CodeNotFound, "%v: %s", approverbot.ErrUnknownQuestion, in.RequestID)
		return
	}
	ans, err := answerOf(q, in, appr.ID, device)
	if err != nil {
		writeError(w, http.StatusBadRequest, messages.CodeInvalidRequest, "%v", err)
		return
	}
	ans.Digest = in.Digest
	rep, err := resp.Respond(r.Context(), ans)
	var fe *messages.FieldError
	var re *messages.ReplyError
	switch {
	case err == nil:
		c.log.Info("response taken", "request_id", in.RequestID, "approver", appr.ID, "applied", rep.Applied, "state", rep.State)
		writeJSON(w, http.StatusOK, rep)
	case errors.Is(err, approverbot.ErrUnknownQuestion):
		writeError(w, http.StatusNotFound, messages.CodeNotFound, "%v", err)
	case errors.Is(err, approverbot.ErrUnknownApprover):
		writeError(w, http.StatusForbidden, messages.CodeForbidden, "%v", err)
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, messages.CodeInvalidRequest, "%v", err)
	case errors.As(err, &re):
		writeError(w, http.StatusBadGateway, re.Code, "the broker refused the response: %v", err)
	default:
		c.log.Warn("response not sent", "request_id", in.RequestID, "err", err)
		writeError(w, http.StatusServiceUnavailable, messages.CodeUnavailable, "not sent: %v", err)
	}
}

// answerOf is the answer of body in to q, from approver on device.
func answerOf(q approverbot.Question, in respondBody, approver, device string) (approverbot.Answer, error) {
	if len(in.Answer) > 0 {
		return approverbot.ChooseAnswer(q, in.Answer, approver, Name, device)
	}
	c := approverbot.ChoiceFromScope(*in.Approved, in.Scope, in.RejectMode)
	if len(in.UpdatedArguments) == 0 {
		return approverbot.Choose(q, c, approver, Name, device, in.Feedback)
	}
	edited, err := approverbot.ParseEdit(q, approverbot.Draft{}, string(in.UpdatedArguments))
	if err != nil {
		return approverbot.Answer{}, err
	}
	return approverbot.ChooseEdited(q, c, approver, Name, device, in.Feedback, edited)
}

// checkBody checks what the broker's own validation does not: presence,
// and which fields go with approvals and rejections.
func checkBody(in respondBody) error {
	switch {
	case in.RequestID == "":
		return errors.New("request_id is required")
	case in.Approver == "":
		return errors.New("approver is required (an approver id of the bot's config)")
	case in.Approved == nil:
		return errors.New("approved is required (true or false)")
	case *in.Approved && in.Digest == "":
		return errors.New("digest is required with approved true: name the digest of the approval_needed event the approver was shown, the version of the question this approval approves")
	case in.Scope != "" && !in.Scope.Valid():
		return fmt.Errorf("scope %q: want once, session, always, always_prefix or omitted (once)", in.Scope)
	case in.RejectMode != "" && !in.RejectMode.Valid():
		return fmt.Errorf("reject_mode %q: want reject_soft, reject_hard or omitted (reject_hard)", in.RejectMode)
	case *in.Approved && in.RejectMode != "":
		return errors.New("reject_mode goes with rejections only (approved is true)")
	case *in.Approved && in.Feedback != "":
		return errors.New("feedback goes with rejections only (approved is true)")
	case !*in.Approved && in.Scope != "":
		return errors.New("scope goes with approvals only (approved is false)")
	case len(in.Answer) > 0 && !*in.Approved:
		return errors.New("answer goes with approvals only (approved is false)")
	case len(in.Answer) > 0 && in.Scope != "" && in.Scope != messages.ScopeOnce:
		return fmt.Errorf("an answer approves this call once: scope %q is not offered with it", in.Scope)
	case !*in.Approved && len(in.UpdatedArguments) > 0:
		return errors.New("updated_arguments go with approvals only (approved is false)")
	case len(in.Answer) > 0 && len(in.UpdatedArguments) > 0:
		return errors.New("answer and updated_arguments do not go together: an ask-user question is answered, not approved with changes")
	}
	return nil
}

// replayCache remembers the signatures used within the replay window.
// Only verified requests reach it, so its size is bounded by the rate of
// genuine responses.
type replayCache struct {
	mu    sync.Mutex
	seen  map[string]bool
	order []seenSig // insertion order, for expiry
}

type seenSig struct {
	sig     string
	expires time.Time
}

// first records sig and reports whether it was not seen before. A
// signature is kept for twice the skew: a request signed up to MaxSkew
// ahead of the bot's clock stays refused until its timestamp is stale.
func (rc *replayCache) first(sig string, now time.Time) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for len(rc.order) > 0 && now.After(rc.order[0].expires) {
		delete(rc.seen, rc.order[0].sig)
		rc.order = rc.order[1:]
	}
	if rc.seen[sig] {
		return false
	}
	if rc.seen == nil {
		rc.seen = map[string]bool{}
	}
	rc.seen[sig] = true
	rc.order = append(rc.order, seenSig{sig: sig, expires: now.Add(2 * MaxSkew)})
	return true
}
