package messages

import (
	"encoding/json"
	"testing"
)

func TestArgumentsToRun(t *testing.T) {
	original := json.RawMessage(`{"command":"npm install && npm run build"}`)
	edited := validEditedDecision()
	plain := validDecision()
	deny := validDenyDecision()
	deny.UpdatedArguments = json.RawMessage(`{"command":"npm ci"}`) // invalid, but must never run
	tests := []struct {
		name   string
		d      *Decision
		want   string
		edited bool
	}{
		{"an approval with changes runs the edited arguments", edited, `{"command":"npm ci"}`, true},
		{"a plain approval runs the agent's arguments", plain, string(original), false},
		{"a deny runs nothing, whatever it carries", deny, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.d.ArgumentsToRun(original)); got != tt.want {
				t.Errorf("ArgumentsToRun = %q, want %q", got, tt.want)
			}
			if got := tt.d.Edited(); got != tt.edited {
				t.Errorf("Edited = %v, want %v", got, tt.edited)
			}
		})
	}
}
