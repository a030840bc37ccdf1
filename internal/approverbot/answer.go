package approverbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Pick is what a person picked and typed on one question of an ask-user
// question (see [messages.AskUser]): channels name questions and options
// by index, since what they show may be clipped while the answer must name
// the tool's own question texts and labels.
type Pick struct {
	// Question is the index of the question (0 when the tool asks none:
	// free text).
	Question int
	// Options are the indexes of the options picked (several only on a
	// multi-select question).
	Options []int
	// Text is what they typed (the question's "Other").
	Text string
}

// ErrNoAnswer: the question takes no answer, or the picks do not make one;
// nothing was sent.
var ErrNoAnswer = fmt.Errorf("%w: not an answer", ErrChoice)

// AnswerOf turns picks on q into the answer the brokers take: for a tool
// with questions, {question: answer} keyed by the tool's own question texts
// (labels picked and text typed joined with ", ", as Claude Code's
// AskUserQuestion answers); for a tool without, the typed text as a JSON
// string. An index out of range, several options on a single-choice
// question or an empty answer is an error wrapping [ErrNoAnswer].
func AnswerOf(q Question, picks []Pick) (json.RawMessage, error) {
	ask := q.AskUser
	if ask == nil {
		return nil, fmt.Errorf("%w: this question asks for an approval, not an answer", ErrNoAnswer)
	}
	if len(ask.Questions) == 0 {
		var text []string
		for _, p := range picks {
			if t := strings.TrimSpace(p.Text); t != "" {
				text = append(text, t)
			}
		}
		return checkedAnswer(ask, messages.AnswerText(strings.Join(text, "\n")))
	}
	picked, typed := map[string][]string{}, map[string]string{}
	for _, p := range picks {
		if p.Question < 0 || p.Question >= len(ask.Questions) {
			return nil, fmt.Errorf("%w: question %d does not exist (the tool asks %d)", ErrNoAnswer, p.Question+1, len(ask.Questions))
		}
		aq := ask.Questions[p.Question]
		for _, o := range p.Options {
			if o < 0 || o >= len(aq.Options) {
				return nil, fmt.Errorf("%w: option %d does not exist (question %d offers %d)", ErrNoAnswer, o+1, p.Question+1, len(aq.Options))
			}
			picked[aq.Question] = append(picked[aq.Question], aq.Options[o].Label)
		}
		if t := strings.TrimSpace(p.Text); t != "" {
			typed[aq.Question] = strings.TrimSpace(typed[aq.Question] + " " + t)
		}
	}
	raw, err := ask.Answers(picked, typed)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoAnswer, answerProblem(err))
	}
	return raw, nil
}

func checkedAnswer(ask *messages.AskUser, raw json.RawMessage) (json.RawMessage, error) {
	if err := ask.Check(raw); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoAnswer, answerProblem(err))
	}
	return raw, nil
}

// answerProblem is a messages error without its "invalid request: field"
// framing, for a person.
func answerProblem(err error) string {
	if fe, ok := errors.AsType[*messages.FieldError](err); ok {
		return "the answer " + fe.Problem
	}
	return err.Error()
}

// ChooseAnswer is [Choose] for an answer to an ask-user question: an
// approval of this call (once) carrying raw, which must answer q's
// questions. It refuses where Choose refuses (one's own request) and on a
// question that takes no answer.
func ChooseAnswer(q Question, raw json.RawMessage, approver, channel, device string) (Answer, error) {
	if q.AskUser == nil && q.Open() && q.Request.Tool != "" {
		return Answer{}, fmt.Errorf("%w: this question asks for an approval, not an answer", ErrNoAnswer)
	}
	a, err := Choose(q, ChoiceOnce, approver, channel, device, "")
	if err != nil {
		return Answer{}, err
	}
	if q.AskUser != nil && q.Open() {
		// A settled question's answer goes to the brokers all the same
		// (see Choose): their reply says who settled it.
		if _, err := checkedAnswer(q.AskUser, raw); err != nil {
			return Answer{}, err
		}
	}
	a.Answer = raw
	return a, nil
}

// SubmitAnswer is [Submit] for an answer: [ChooseAnswer], then the same
// round trip to the brokers.
func SubmitAnswer(ctx context.Context, r Responder, log *slog.Logger, q Question, raw json.RawMessage, approver, channel, device string) Submission {
	a, err := ChooseAnswer(q, raw, approver, channel, device)
	if err != nil {
		log.Warn("answer refused", "request_id", q.Request.RequestID, "approver", approver, "err", err)
		return Submission{Text: NotSentText(err)}
	}
	return send(ctx, r, log, q, a)
}

// checkAnswerField checks a hand-built Answer's answer against q (Respond's
// one set of rules): only on an approval, only on an ask-user question,
// and it must answer the questions.
func checkAnswerField(q Question, a Answer) error {
	if len(a.Answer) == 0 {
		return nil
	}
	switch {
	case !a.Approved:
		return fmt.Errorf("%w: an answer comes with an approval, not a rejection", ErrNoAnswer)
	case q.AskUser == nil:
		return fmt.Errorf("%w: this question asks for an approval, not an answer", ErrNoAnswer)
	}
	_, err := checkedAnswer(q.AskUser, a.Answer)
	return err
}

// AnswerSummary renders an answer for people on one line, clipped: a free
// text as it is, {question: answer} as "question → answer; …" in the
// questions' alphabetical order.
func AnswerSummary(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return card.Clip(card.OneLine(s), 300)
	}
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil {
		return card.Clip(card.OneLine(string(raw)), 300)
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" → "+m[k])
	}
	return card.Clip(card.OneLine(strings.Join(parts, "; ")), 300)
}

// ParseAnswerLine reads an answer typed on one line (a terminal, a chat
// reply) for q: for a tool without questions the
// whole line; otherwise one part per question, in order, separated by ";"
// (a single question takes the whole line). A part of option numbers
// ("2", "1,3", "1 3") picks those options; any other part is the
// question's own words.
func ParseAnswerLine(q Question, text string) []Pick {
	if q.AskUser == nil || len(q.AskUser.Questions) == 0 {
		return []Pick{{Text: text}}
	}
	parts := []string{text}
	if len(q.AskUser.Questions) > 1 {
		parts = strings.Split(text, ";")
	}
	var picks []Pick
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p := Pick{Question: i}
		fields := strings.FieldsFunc(part, func(r rune) bool { return r == ',' || r == ' ' })
		for _, f := range fields {
			n, err := strconv.Atoi(f)
			if err != nil || i >= len(q.AskUser.Questions) || len(q.AskUser.Questions[i].Options) == 0 {
				p.Options = nil
				p.Text = part
				break
			}
			p.Options = append(p.Options, n-1)
		}
		picks = append(picks, p)
	}
	return picks
}
