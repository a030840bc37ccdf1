package web

import (
	"errors"
	"strings"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// editLine is a card's editor for approve with changes: a shell call's
// command as text, or any other call's arguments as JSON. The page checks
// the text before it sends it (edit.js); the server parses it again with
// the core's rules (approverbot.ParseEdit), so the page's check is a
// convenience, never the guard.
type editLine struct {
	Shell bool
	Text  string
	// Lines is how many lines Text holds: the editor shows every one of
	// them and says how many (red team AG F3: a 3-row editor hid the
	// lines an edit of the first approved).
	Lines int
}

// EditDraft is the editor's starting point as the API lists it: the
// command of a shell call (shell true), else the arguments as JSON.
type EditDraft struct {
	Shell bool   `json:"shell"`
	Text  string `json:"text"`
}

// addEdit adds the editor of q for viewer to d, when q offers one.
func (d *cardData) addEdit(q approverbot.Question, viewer string) {
	if d.Mine || approverbot.EditOffered(q, viewer) != nil {
		return
	}
	dr := approverbot.DraftOf(q)
	if dr.TooLong() {
		return
	}
	d.Edit = &editLine{Shell: dr.Shell, Text: dr.Text, Lines: strings.Count(dr.Text, "\n") + 1}
}

// editedAnswer is the answer of a POST /api/respond that carries an edit:
// the choice must approve, and text is parsed against q's draft.
func editedAnswer(q approverbot.Question, choice approverbot.Choice, text, approver, channel, device, feedback string) (approverbot.Answer, error) {
	if !choice.Approves() {
		return approverbot.Answer{}, errors.New("an edit goes with an approval (action approve, session or always)")
	}
	edited, err := approverbot.ParseEdit(q, approverbot.DraftOf(q), text)
	if err != nil {
		return approverbot.Answer{}, err
	}
	return approverbot.ChooseEdited(q, choice, approver, channel, device, feedback, edited)
}
