package messages_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestApproverGroupsAreBoundedAndCheckedLikeIDs(t *testing.T) {
	base := messages.Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "a"}, Approved: true}
	tests := []struct {
		name   string
		groups []string
		want   string
	}{
		{"an empty group", []string{"sre", ""}, "approver_groups[1]"},
		{"a group with a newline", []string{"sre\nadmins"}, "approver_groups[0]"},
		{"a group of spaces", []string{"  "}, "approver_groups[0]"},
		{"more groups than the limit", make([]string, messages.MaxApproverGroups+1), "at most 64 groups"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.ApproverGroups = tc.groups
			if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error naming %q", err, tc.want)
			}
		})
	}
	r := base
	r.ApproverGroups = []string{"okta-sre", "Payments On-Call"}
	if err := r.Validate(); err != nil {
		t.Fatalf("valid groups refused: %v", err)
	}
}
