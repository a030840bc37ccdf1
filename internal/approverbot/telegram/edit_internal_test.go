package telegram

import "testing"

func TestIsEditCommand(t *testing.T) {
	for text, want := range map[string]bool{
		"/edit":                true,
		"/edit git push":       true,
		"/edit@signoff_bot ls": true,
		"  /EDIT  ":            true,
		"/editor":              false,
		"edit":                 false,
		"please /edit this":    false,
		"/approve":             false,
		"":                     false,
	} {
		if got := isEditCommand(text); got != want {
			t.Errorf("isEditCommand(%q) = %v, want %v", text, got, want)
		}
	}
}
