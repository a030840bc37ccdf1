package terminal_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
)

func TestTerminalPassesTheChannelSuite(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, s channeltest.Setup) channeltest.Harness {
		return &harness{s: s, tp: openPTY(t)}
	})
}

// harness plays the terminal's operator (Setup.As) on a pseudo-terminal.
type harness struct {
	s  channeltest.Setup
	tp *ttyPair
}

func (h *harness) Config() string {
	return `
teams: [default]
approvers:
  alice: {display: Alice}
  bob: {}
  dave: {display: Dave}
terminal: {approver: ` + h.s.As + `}
`
}

func (h *harness) Channel(t *testing.T, c *approverbot.Config) approverbot.Channel {
	return terminal.New(h.tp.tty, h.tp.tty, terminal.Options{Logger: h.s.Logger, Device: "ct-tty", KeyGuard: -1,
		Shows:     func(q approverbot.Question) bool { return c.Admits(h.s.As, q) },
		Interrupt: func() { t.Error("unexpected interrupt") }})
}

// HidesFromNonMembers: the terminal shows its operator only the questions
// the brokers name them an answerer of (Options.Shows, as the bot builds it).
func (h *harness) HidesFromNonMembers() bool { return true }

// Addressable: keys answer the prompted question only.
func (h *harness) Addressable() bool { return false }

// NotShown checks for a while that question id never reaches the screen.
func (h *harness) NotShown(t *testing.T, id string) {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(h.tp.out.text(), id) {
			t.Fatalf("question %s is on the terminal of a non-member; the screen:\n%s", id, h.tp.out.text())
		}
	}
}

// block is the question's view on the screen: from its header to the
// prompt that follows it ("" while it is not shown).
func (h *harness) block(id string) string {
	all := h.tp.out.text()
	i := strings.Index(all, "request     "+id)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(all[:i], "▶ ")
	end := strings.Index(all[i:], "› ")
	if start < 0 || end < 0 {
		return ""
	}
	return all[start : i+end+len("› ")]
}

// Shown waits for question id at the prompt; a question queued behind
// another is brought forward by skipping the one prompted.
func (h *harness) Shown(t *testing.T, id string) (string, []approverbot.Choice) {
	deadline := time.Now().Add(channeltest.Wait)
	for h.block(id) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("question %s never prompted; the screen:\n%s", id, h.tp.out.text())
		}
		if strings.Contains(h.tp.out.text(), "new question") && strings.HasSuffix(strings.TrimRight(h.tp.out.text(), " "), "›") {
			h.tp.typeKeys(t, "k")
		}
		time.Sleep(20 * time.Millisecond)
	}
	text := h.block(id)
	// The prompt: the line of keys and the line the cursor waits on.
	last := strings.LastIndex(text, "\n")
	prompt := text[strings.LastIndex(text[:max(last, 0)], "\n")+1:]
	var cs []approverbot.Choice
	for key, c := range map[string]approverbot.Choice{"[y]": approverbot.ChoiceOnce, "[s]": approverbot.ChoiceSession,
		"[a]": approverbot.ChoiceAlways, "[n]": approverbot.ChoiceReject, "[x]": approverbot.ChoiceRejectStop} {
		if strings.Contains(prompt, key) {
			cs = append(cs, c)
		}
	}
	// In the prompt's order.
	ordered := []approverbot.Choice{}
	for _, c := range approverbot.Choices {
		for _, got := range cs {
			if got == c {
				ordered = append(ordered, c)
			}
		}
	}
	h.tp.out.mark = len(h.tp.out.text())
	return text, ordered
}

func (h *harness) Choose(t *testing.T, id string, c approverbot.Choice, feedback string) string {
	h.Shown(t, id)
	key := map[approverbot.Choice]string{approverbot.ChoiceOnce: "y", approverbot.ChoiceSession: "s",
		approverbot.ChoiceAlways: "a", approverbot.ChoiceReject: "n", approverbot.ChoiceRejectStop: "x"}[c]
	h.tp.typeKeys(t, key)
	if c == approverbot.ChoiceAlways {
		// Always waits for its confirmation: A.
		h.tp.out.expect("grants Always")
		h.tp.typeKeys(t, "A")
	}
	if !c.Approves() {
		h.tp.out.expect("feedback for the agent")
		h.tp.typeKeys(t, feedback+"\r")
	}
	return h.answerLine(t, string(c))
}

// answerLine waits for the log line of an answer since the mark: ✓ or ✗
// when applied, ! when not.
func (h *harness) answerLine(t *testing.T, what string) string {
	deadline := time.Now().Add(channeltest.Wait)
	for {
		all := h.tp.out.text()
		rest := all[min(h.tp.out.mark, len(all)):]
		for _, l := range strings.Split(rest, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "✗ ") || strings.HasPrefix(t, "! ") {
				return t
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer line after %s; the screen:\n%s", what, rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Settled waits until the question left the prompt: answered here (its
// log line) or settled elsewhere (a ⏭ line).
func (h *harness) Settled(t *testing.T, id string) string {
	deadline := time.Now().Add(channeltest.Wait)
	for {
		all := h.tp.out.text()
		rest := all[min(h.tp.out.mark, len(all)):]
		for _, l := range strings.Split(rest, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "⏭ ") || strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "✗ ") {
				return t
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("question %s never left the prompt; the screen:\n%s", id, rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) Feedback() bool { return true }

// Break ends the terminal's input (its "service"): it can show questions
// but no longer answer them, which cannot be undone.
func (h *harness) Break() bool { _ = h.tp.master.Close(); return true }
func (h *harness) Heal() bool  { return false }

func (h *harness) Secrets() []string { return nil }

// Edit presses e, erases the command the editor starts with (Ctrl-U),
// types text and Enter, approves the changed call the terminal then shows
// (y), and returns the answer's log line; an edit that cannot be sent
// returns the line saying so.
func (h *harness) Edit(t *testing.T, id, text string) string {
	h.Shown(t, id)
	// Enter first: the rest of a line being typed when its question was
	// settled elsewhere (an edit refused, then rejected by another
	// approver) is dropped up to its Enter; at the keys Enter does nothing.
	h.tp.typeKeys(t, "\r")
	h.tp.typeKeys(t, "e")
	h.tp.out.expect("approve with changes")
	h.tp.typeKeys(t, "\x15"+text+"\r")
	deadline := time.Now().Add(channeltest.Wait)
	for {
		all := h.tp.out.text()
		rest := all[min(h.tp.out.mark, len(all)):]
		if strings.Contains(rest, "y approves this changed call once") {
			if !strings.Contains(rest, "as it will be sent:") || !strings.Contains(rest, strconv.Quote(text)) {
				t.Fatalf("the changed call is not shown before y:\n%s", rest)
			}
			h.tp.typeKeys(t, "y")
			break
		}
		if strings.Contains(rest, "! ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edit was neither shown to confirm nor refused; the screen:\n%s", rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return h.answerLine(t, "an edit")
}

// Asked reads the question's "asks you" rows: a numbered line per option.
func (h *harness) Asked(t *testing.T, id string) (string, [][]string) {
	text, _ := h.Shown(t, id)
	if !strings.Contains(text, "[r]") {
		t.Fatalf("the prompt offers no answer:\n%s", text)
	}
	var options [][]string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "asks you"))
		switch {
		case strings.HasPrefix(l, "Question "):
			options = append(options, nil)
		case len(options) > 0 && len(l) > 3 && l[0] >= '1' && l[0] <= '9' && strings.Contains(l[:4], ". "):
			label, _, _ := strings.Cut(l[strings.Index(l, ". ")+2:], " — ")
			options[len(options)-1] = append(options[len(options)-1], label)
		}
	}
	return text, options
}

// Answer presses r and types the option numbers, or the words.
func (h *harness) Answer(t *testing.T, id string, picks []approverbot.Pick) string {
	h.Shown(t, id)
	h.tp.typeKeys(t, "r")
	h.tp.out.expect("answer (")
	var typed []string
	for _, p := range picks {
		var nums []string
		for _, o := range p.Options {
			nums = append(nums, strconv.Itoa(o+1))
		}
		s := strings.Join(nums, ",")
		if p.Text != "" {
			s = p.Text
		}
		typed = append(typed, s)
	}
	h.tp.typeKeys(t, strings.Join(typed, "; ")+"\r")
	deadline := time.Now().Add(channeltest.Wait)
	for {
		all := h.tp.out.text()
		rest := all[min(h.tp.out.mark, len(all)):]
		for _, l := range strings.Split(rest, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "✓ ") || strings.HasPrefix(t, "! ") {
				return t
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer line; the screen:\n%s", rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
