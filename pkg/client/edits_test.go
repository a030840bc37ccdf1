package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestCallToRun(t *testing.T) {
	call := client.Call{Tool: "bash", Arguments: map[string]any{"command": "make deploy"}}
	edited := &messages.Decision{Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonApproved,
		UpdatedArguments: json.RawMessage(`{"command":"make plan"}`)}
	deny := &messages.Decision{Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonRejected,
		UpdatedArguments: json.RawMessage(`{"command":"make plan"}`)}
	plain := &messages.Decision{Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonApproved}

	if run, ok := client.CallToRun(call, edited); !ok || string(run.Arguments.(json.RawMessage)) != `{"command":"make plan"}` || run.Tool != "bash" {
		t.Errorf("edited approval: %+v, %v", run, ok)
	}
	if run, ok := client.CallToRun(call, plain); !ok || run.Arguments.(map[string]any)["command"] != "make deploy" {
		t.Errorf("plain approval: %+v, %v", run, ok)
	}
	if _, ok := client.CallToRun(call, deny); ok {
		t.Error("a deny may run")
	}
	if _, ok := client.CallToRun(call, nil); ok {
		t.Error("no decision may run")
	}
	// A person's answer to an ask-user tool is its result: it does not run.
	answered := &messages.Decision{Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonApproved, Answer: json.RawMessage(`"no"`)}
	if _, ok := client.CallToRun(call, answered); ok {
		t.Error("an answered ask-user call may run")
	}
	if text, ok := client.Answered(answered); !ok || text != "The user answered through Signoff (the tool was not run; this is its result): no" {
		t.Errorf("Answered = %q, %v", text, ok)
	}
	if _, ok := client.Answered(plain); ok {
		t.Error("a plain approval reads as answered")
	}
}

func TestRunBatchRunsTheCallAsApproved(t *testing.T) {
	nc, stop := devPlane()
	defer stop()
	c, err := client.New(nc, client.WithSession("session-edit-batch"), client.WithAgent("pod-7"))
	if err != nil {
		t.Fatal(err)
	}
	approveNextWithChanges(nc, `{"command":"make deploy ENV=staging"}`)
	var ran []string
	results, err := c.RunBatch(context.Background(), []client.Call{
		{Tool: "bash", Arguments: map[string]any{"command": "make deploy ENV=prod"}},
		{Tool: "bash", Arguments: map[string]any{"command": "ls -l"}},
	}, func(_ context.Context, call client.Call) error {
		data, err := json.Marshal(call.Arguments)
		ran = append(ran, string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"command":"make deploy ENV=staging"}`, `{"command":"ls -l"}`}
	if len(ran) != 2 || ran[0] != want[0] || ran[1] != want[1] {
		t.Fatalf("ran %q, want %q", ran, want)
	}
	if !results[0].Decision.Edited() || results[0].Call.Arguments.(map[string]any)["command"] != "make deploy ENV=prod" {
		t.Fatalf("result = %+v", results[0])
	}
}
