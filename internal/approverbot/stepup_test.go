package approverbot

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func stepUpQuestion() Question {
	q := offerQuestion("pod-7")
	q.StepUp = &messages.StepUpNeed{Why: "rule bash(helm *)", MaxAgeS: 60}
	return q
}

func TestAnApprovalOfAStepUpQuestionNeedsTheAssertion(t *testing.T) {
	q := stepUpQuestion()
	for _, c := range []Choice{ChoiceOnce, ChoiceSession, ChoiceAlways} {
		if _, err := Choose(q, c, "alice", "slack", "", ""); !errors.Is(err, ErrStepUp) || !errors.Is(err, ErrChoice) {
			t.Errorf("Choose(%s) on a step-up question: %v, want ErrStepUp", c, err)
		}
		if err := Offered(q, c, "alice"); !errors.Is(err, ErrStepUp) {
			t.Errorf("Offered(%s) on a step-up question: %v, want ErrStepUp", c, err)
		}
	}
	for _, c := range []Choice{ChoiceReject, ChoiceRejectStop} {
		if _, err := Choose(q, c, "alice", "slack", "", ""); err != nil {
			t.Errorf("Choose(%s) on a step-up question: %v, want it offered", c, err)
		}
	}
	now := time.Now()
	fresh := &messages.StepUp{Method: messages.StepUpWebAuthn, CredentialID: "AQID", AssertedAt: now.Add(-5 * time.Second)}
	stale := &messages.StepUp{Method: messages.StepUpWebAuthn, CredentialID: "AQID", AssertedAt: now.Add(-2 * time.Minute)}
	tests := []struct {
		name     string
		q        Question
		approved bool
		ev       *messages.StepUp
		wantErr  string // "" when accepted
	}{
		{"an approval with a fresh assertion", q, true, fresh, ""},
		{"an approval without one", q, true, nil, "step-up required"},
		{"an approval with an assertion older than max_age", q, true, stale, "needs one from the last 1m0s"},
		{"a rejection without one", q, false, nil, ""},
		{"evidence on a question that needs none", offerQuestion("pod-7"), true, fresh, "needs none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkStepUp(tc.q, tc.approved, tc.ev, now)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("checkStepUp = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestAStepUpCardOffersNoApprovalOnChatChannels(t *testing.T) {
	v := Present(stepUpQuestion(), Limits{})
	if v.ApproveHere() {
		t.Fatal("a step-up card may be approved on a channel that cannot take an assertion")
	}
	why := v.WhyNotHere("Slack")
	for _, want := range []string{"passkey or security key", "rule bash(helm *)", "web page", "Slack"} {
		if !strings.Contains(why, want) {
			t.Errorf("WhyNotHere = %q, want it to say %q", why, want)
		}
	}
	if plain := Present(offerQuestion("pod-7"), Limits{}); !plain.ApproveHere() || plain.WhyNotHere("Slack") != "" {
		t.Errorf("a whole card without step-up: ApproveHere %v, WhyNotHere %q", plain.ApproveHere(), plain.WhyNotHere("Slack"))
	}
}
