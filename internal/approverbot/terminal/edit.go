package terminal

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// editShown bounds the changed call quoted in a log line.
const editShown = 200

// startEdit opens the editor of approve with changes on the current
// question: one line, holding the command of a shell call, else the
// arguments as compact JSON. In raw mode the line starts as the call's own
// (Backspace and Ctrl-U change it); in line mode the call is printed to
// copy from, and the line typed replaces it.
func (u *ui) startEdit() {
	if err := approverbot.EditOffered(u.cur.q, u.op.ID); err != nil {
		u.out.breakLine()
		u.out.println("  " + line(strings.TrimPrefix(err.Error(), approverbot.ErrChoice.Error()+": ")))
		u.prompt()
		return
	}
	d := approverbot.DraftOf(u.cur.q)
	if d.TooLong() {
		u.out.breakLine()
		u.out.println("  " + approverbot.WhyTooLong)
		u.prompt()
		return
	}
	text := d.Text
	if !d.Shell {
		if c, err := compact(text); err == nil {
			text = c
		}
	}
	u.out.breakLine()
	what := "the command"
	if !d.Shell {
		what = "the arguments (one JSON object)"
	}
	u.out.println("  " + u.st.dim("approve with changes: edit "+what+"; Enter shows the changed call, y then approves it once, the policy judges it again"))
	u.typing = &feedback{edit: &d}
	if u.raw && line(text) == text {
		u.typing.buf = []rune(text)
	} else {
		// A line mode terminal, a script of several lines (which one line
		// cannot hold as it is: joining its lines would change what it
		// runs), or text with characters a terminal must not be sent as
		// they are (escape sequences): shown cleaned to copy from, and
		// typed anew.
		u.out.println("  now: " + line(text))
	}
	u.prompt()
}

// editPrompt is the prompt while a changed call is typed.
func (u *ui) editPrompt() string {
	what := "command"
	if !u.typing.edit.Shell {
		what = "arguments"
	}
	how := "Enter shows it to approve, Esc goes back"
	if !u.raw {
		how = "Enter shows it to approve, an empty line goes back"
	}
	return "  approve with changes (" + how + ") " + what + " › "
}

// submitEdit sends the changed call typed; what cannot be sent is said,
// and the line stays to be fixed.
func (u *ui) submitEdit(ctx context.Context, text string) {
	d := *u.typing.edit
	u.out.breakLine()
	if !u.raw && strings.TrimSpace(text) == "" {
		u.typing = nil
		u.out.println("  " + u.st.dim("back to the keys; nothing was sent"))
		u.prompt()
		return
	}
	edited, err := approverbot.ParseEdit(u.cur.q, d, text)
	var a approverbot.Answer
	if err == nil {
		a, err = approverbot.ChooseEdited(u.cur.q, approverbot.ChoiceOnce, u.op.ID, Name, u.c.o.Device, "", edited)
	}
	if err != nil {
		u.out.println("  " + u.st.yellow("!") + " " + line(approverbot.NotSentText(err)))
		u.typing.buf = []rune(text)
		u.prompt()
		return
	}
	// What is sent, as the card shows arguments, before it is: the line
	// editor's screen is the terminal's drawing of keys, which may differ
	// from the line (red team AL F2).
	u.typing.buf = []rune(text)
	u.typing.confirm, u.typing.shown = &a, time.Now()
	u.out.println("  " + u.st.bold("the changed call, as it will be sent:"))
	for _, l := range strings.Split(argumentsText(edited), "\n") {
		u.out.println("    " + l)
	}
	u.prompt()
}

// confirmInput takes the key (or line) that answers the changed call
// shown: y sends it, e edits it again; in raw mode Esc, in line mode any
// other line, goes back to the keys. A y that came before the call was
// shown, or within the key guard after, is not taken: it was typed, or
// pasted, before it could be read.
func (u *ui) confirmInput(ctx context.Context, ev inputEvent) {
	f := u.typing
	key := ev.key
	if !u.raw {
		key, _ = utf8.DecodeRuneInString(strings.TrimSpace(ev.line))
		if t := strings.TrimSpace(ev.line); len(t) > 1 {
			key = 0
		}
	}
	switch unicode.ToLower(key) {
	case 'y':
		if g := u.c.o.KeyGuard; g > 0 && ev.at.Before(f.shown.Add(g)) {
			u.out.breakLine()
			u.out.println("  " + u.st.yellow("key 'y' ignored: it came before the changed call could be read; read it, then press y again"))
			u.prompt()
			return
		}
		a := *f.confirm
		u.typing = nil
		u.deliver(ctx, a, nil)
	case 'e':
		f.confirm = nil
		u.out.breakLine()
		if !u.raw {
			u.out.println("  now: " + line(string(f.buf)))
			f.buf = nil
		}
		u.prompt()
	case keyEscape, keyEOF:
		u.typing = nil
		u.out.breakLine()
		u.out.println("  " + u.st.dim("back to the keys; nothing was sent"))
		u.prompt()
	default:
		if !u.raw {
			u.typing = nil
			u.out.println("  " + u.st.dim("back to the keys; nothing was sent"))
			u.prompt()
		}
	}
}

func compact(s string) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return "", err
	}
	return b.String(), nil
}
