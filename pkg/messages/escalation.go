package messages

import (
	"fmt"
	"strconv"
	"time"
)

// EscalationStep is one step of a question's escalation ladder: after
// AfterMS milliseconds without a decision, exactly one of remind (ask the
// question's teams again), add a team (AddTeam may now answer too), or page
// (trigger the named pager).
type EscalationStep struct {
	AfterMS int64  `json:"after_ms"`
	Remind  bool   `json:"remind,omitempty"`
	AddTeam string `json:"add_team,omitempty"`
	Page    string `json:"page,omitempty"`
}

// Escalation step kinds, as [EscalationStep.Kind] names them (metrics, logs,
// audit).
const (
	StepRemind  = "remind"
	StepAddTeam = "add_team"
	StepPage    = "page"
)

// Kind names what the step does: remind, add_team or page ("" for a step
// that does nothing or more than one thing, which Validate refuses).
func (s EscalationStep) Kind() string {
	n, kind := 0, ""
	if s.Remind {
		n, kind = n+1, StepRemind
	}
	if s.AddTeam != "" {
		n, kind = n+1, StepAddTeam
	}
	if s.Page != "" {
		n, kind = n+1, StepPage
	}
	if n != 1 {
		return ""
	}
	return kind
}

// Target is the team a step adds or the pager it triggers ("" for remind).
func (s EscalationStep) Target() string {
	if s.AddTeam != "" {
		return s.AddTeam
	}
	return s.Page
}

// ValidateLadder checks a ladder as the broker stores it: each step does
// exactly one thing, at a positive delay that grows from step to step.
func ValidateLadder(steps []EscalationStep) error {
	var last int64
	for i, s := range steps {
		field := "escalation[" + strconv.Itoa(i) + "]"
		switch {
		case s.Kind() == "":
			return &FieldError{Field: field, Problem: "a step does exactly one of remind, add_team or page"}
		case s.AfterMS <= last:
			return &FieldError{Field: field + ".after_ms", Problem: fmt.Sprintf("must be more than the previous step's %d", last)}
		case s.AddTeam != "":
			if err := checkToken(field+".add_team", s.AddTeam); err != nil {
				return err
			}
		}
		last = s.AfterMS
	}
	return nil
}

// EscalationRun is a step of a question's ladder that ran, as its audit
// record lists it.
type EscalationRun struct {
	// Step is the step's place in the ladder, from 1.
	Step int `json:"step"`
	// AfterMS, Remind, AddTeam and Page are the step's (see
	// [EscalationStep]).
	AfterMS int64  `json:"after_ms"`
	Remind  bool   `json:"remind,omitempty"`
	AddTeam string `json:"add_team,omitempty"`
	Page    string `json:"page,omitempty"`
	// At is when the step finished, by the state store's clock.
	At time.Time `json:"at"`
}

// RunOf is the audit entry of step (the n-th of its ladder, from 1) that
// finished at at.
func RunOf(n int, step EscalationStep, at time.Time) EscalationRun {
	return EscalationRun{Step: n, AfterMS: step.AfterMS, Remind: step.Remind, AddTeam: step.AddTeam, Page: step.Page, At: at}
}
