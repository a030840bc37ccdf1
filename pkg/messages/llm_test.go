package messages

import "testing"

func TestLLMMessages(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"a soft reject with feedback", LLMMessageSoftReject("write", "Don't write that file"),
			"User rejected tool 'write'. Feedback: Don't write that file\n\n" +
				"[System reminder: Ask the user what they would prefer instead before continuing.]"},
		{"a soft reject without feedback", LLMMessageSoftReject("write", ""),
			"User rejected tool 'write'.\n\n[System reminder: Ask the user what they would prefer instead before continuing.]"},
		{"a soft reject with blank feedback", LLMMessageSoftReject("write", " \n "),
			"User rejected tool 'write'.\n\n[System reminder: Ask the user what they would prefer instead before continuing.]"},
		{"a hard reject with feedback", LLMMessageHardReject("bash", "Wrong approach entirely"),
			"User rejected tool 'bash'. Feedback: Wrong approach entirely\n\n" +
				"The user stopped this turn: do not call more tools; wait for the user's next message."},
		{"a hard reject without feedback", LLMMessageHardReject("bash", ""),
			"User rejected tool 'bash'.\n\nThe user stopped this turn: do not call more tools; wait for the user's next message."},
		{"a hard stop", LLMMessageHardStop("edit"),
			"Tool 'edit' was not run because the user stopped this turn: do not call more tools; wait for the user's next message."},
		{"a timeout", LLMMessageTimeout("bash"),
			"Tool 'bash' was not run: approval timed out (no approver response)."},
		{"a policy deny with a reason", LLMMessageDenied("bash", "writes to /etc are denied."),
			"Tool 'bash' was denied by policy: writes to /etc are denied."},
		{"a policy deny without a reason", LLMMessageDenied("bash", ""),
			"Tool 'bash' was denied by policy."},
		{"an outage is no policy's deny", LLMMessageUnavailable("bash", "state store unavailable: get: timeout; denied to fail closed, retry later"),
			"Tool 'bash' was not run: Signoff is unavailable (state store unavailable: get: timeout; denied to fail closed, retry later)."},
		{"an outage without a reason", LLMMessageUnavailable("bash", ""),
			"Tool 'bash' was not run: Signoff is unavailable; retry later."},
		{"a cancel with a reason", LLMMessageCancelled("bash", "agent shutting down"),
			"Tool 'bash' was not run: the request was cancelled (agent shutting down)."},
		{"a cancel without a reason", LLMMessageCancelled("bash", ""),
			"Tool 'bash' was not run: the request was cancelled."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got  %q\nwant %q", tt.got, tt.want)
			}
		})
	}
}
