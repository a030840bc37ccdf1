package terminal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// item is a question this terminal has shown and not yet seen settled:
// waiting for the prompt, at it, or answered here without settling it (a
// quorum vote counted, an answer the brokers refused), so that its
// settlement is still reported and its updates do not prompt again.
type item struct {
	q approverbot.Question
}

// feedback is a line being typed: a rejection's feedback, (answer set) an
// answer to an ask-user question (key r), or (edit set) the changed call
// of an approval with changes (key e).
type feedback struct {
	mode   messages.RejectMode
	answer bool
	edit   *approverbot.Draft
	buf    []rune
	// confirm is the changed call typed, parsed and waiting for y: the
	// approver reads it as it will be sent before it is (an editor's
	// screen may differ from its line). shown is when it was printed.
	confirm *approverbot.Answer
	shown   time.Time
}

// limit is the most bytes the line may hold.
func (f *feedback) limit() int {
	if f.edit != nil {
		return messages.MaxUpdatedArgumentsBytes
	}
	return messages.MaxFeedbackBytes
}

// ui is the prompt loop. It runs on one goroutine (Run's) and owns
// everything below; Ask and Resolve reach it through Channel.events.
type ui struct {
	c   *Channel
	r   approverbot.Responder
	op  approverbot.Approver
	st  style
	raw bool
	out *screen

	items   map[string]*item // shown and not settled, by request id
	queue   []*item          // waiting for the prompt, oldest first
	cur     *item            // being prompted, or nil
	typing  *feedback        // non-nil while a feedback line is typed
	noInput bool             // the input ended: show questions only

	revoking *revoking        // non-nil while a grant id is typed after r
	listed   []messages.Grant // the latest grants list, numbered for r
	// discard: the line being typed lost its prompt (the question was
	// settled elsewhere); its rest, up to Enter, is dropped so that it
	// neither answers nor runs a key.
	discard bool
	// lastGone is when the question last prompted left the prompt;
	// guardUntil, when the question now prompted replaced it within
	// keyGuard, is the end of the time a key may still have been meant
	// for that one (see keyGuard).
	lastGone, guardUntil time.Time
	// interleaved: output about other questions (a notice, a settlement)
	// was printed under the current question's card since its prompt:
	// the next prompt says its verdict again first (red team AG F2).
	interleaved bool
	// alwaysFor is the request id of the question whose Always waits
	// for its confirmation (A), asked for at alwaysAt: a standing grant
	// is never one key away (red team AL F7: a, next to s, granted
	// for 30 days at once).
	alwaysFor string
	alwaysAt  time.Time
	// alwaysKey is the key that confirms it: the other case of the key
	// that opened it, as received (a → A; A, as Caps Lock sends it, →
	// a), so that one key pressed twice never grants (red team AP F4).
	alwaysKey rune
	// taken is the question that left the prompt without this
	// operator's answer (settled elsewhere, withdrawn by its agent, no
	// longer routed here); the next question to take the prompt is held
	// back for SwapGuard and says it took that one's place (replaced):
	// a key is for the question read, and the agent may withdraw the
	// one being read and ask a look-alike at once (red team AP F11).
	taken    *approverbot.Question
	takenWhy string
	replaced string
}

// keyGuard is how long after a question takes the prompt from another
// the keys that answer are not taken for it: a key typed, or already
// read, for the question that just left — a second press while its
// answer was in flight, a press as it was settled elsewhere — would
// otherwise answer one the operator has not read (red team Y1: y, y
// approved npm test and then curl | sh).
const keyGuard = 600 * time.Millisecond

// swapGuard is how long the keys that answer wait after a question took
// the place of one that left the prompt under the operator (settled
// elsewhere, withdrawn): a decision made on the card that left is not
// taken for the one that came, however alike they read (red team AP F11:
// a y 1.2 s after a withdrawn staging card approved its prod twin).
const swapGuard = 2500 * time.Millisecond

func (u *ui) run(ctx context.Context, inputs <-chan inputEvent) {
	who := line(u.op.ID)
	if u.op.Display != "" {
		who = line(u.op.Display) + " (" + who + ")"
	}
	keys := "press a key"
	if !u.raw {
		keys = "type a key, then Enter"
	}
	u.out.println(u.st.dim("Signoff terminal approver: answering as " + who + "; questions appear here (" + keys + ", ? for help; g lists grants)."))
	if u.c.o.Open {
		u.out.println(u.st.yellow("⚠ " + approverbot.OpenPlaneText))
	}
	tick := time.NewTicker(u.c.o.Tick)
	defer tick.Stop()
	for {
		u.promptNext()
		select {
		case <-ctx.Done():
			u.out.breakLine()
			return
		case <-tick.C:
			u.countDown()
		case <-u.c.events.Ready():
			for _, e := range u.c.events.Take() {
				switch {
				case e.q != nil:
					u.ask(*e.q)
				case e.r != nil:
					u.resolve(*e.r)
				default:
					u.hide(e.hide)
				}
			}
		case ev := <-inputs:
			if ev.err != nil {
				u.inputEnded(ev.err)
				inputs = nil
				continue
			}
			u.input(ctx, ev)
		}
	}
}

// promptNext shows the oldest waiting question when none is prompted.
func (u *ui) promptNext() {
	if u.cur != nil || u.revoking != nil || u.noInput || len(u.queue) == 0 {
		return
	}
	u.cur, u.queue = u.queue[0], u.queue[1:]
	// An Always that waited for its A is asked again when its question
	// comes back (k skipped it): the A answers the grant shown last.
	u.guardUntil, u.alwaysFor, u.replaced = time.Time{}, "", ""
	now := time.Now()
	if g := u.c.o.KeyGuard; g > 0 && now.Sub(u.lastGone) < g {
		u.guardUntil = now.Add(g)
	}
	if u.taken != nil {
		u.replaced = replacedNote(*u.taken, u.takenWhy, u.cur.q)
		if g := u.c.o.SwapGuard; g > 0 && now.Add(g).After(u.guardUntil) {
			u.guardUntil = now.Add(g)
		}
		u.taken = nil
	}
	u.out.breakLine()
	cols, rows := u.c.o.Size()
	u.out.print("\n" + renderQuestionAt(u.st, u.cur.q, u.c.o.Now(), len(u.queue), cols, rows))
	u.interleaved = false
	u.prompt()
}

// editKey reports whether k edits a line being typed (see [ui.typeKey]).
func editKey(k rune) bool { return k == keyDelete || k == keyBackspace || k == keyKill }

// typeKey applies key k to the line being typed in buf, on the screen too,
// and returns the line: Backspace or Delete erases the last rune, Ctrl-U
// every rune, and any other k is appended, unless the line would then be
// longer than limit bytes (a bell instead). Callers pass only the keys the
// line takes.
func (u *ui) typeKey(buf []rune, k rune, limit int) []rune {
	switch {
	case k == keyKill:
		u.out.print(eraseCells(cellsOf(string(buf))))
		return buf[:0]
	case k == keyDelete || k == keyBackspace:
		// The last character as the screen shows it: a base and the
		// combining marks drawn on it (e and U+0301 are one cell, é),
		// and as many cells as it takes (red team AL F2: one cell per
		// rune erased more of the screen than of the line).
		n := len(buf)
		for n > 0 && cellWidth(buf[n-1]) == 0 {
			n--
		}
		n = max(n-1, 0)
		u.out.print(eraseCells(cellsOf(string(buf[n:]))))
		return buf[:n]
	case len(string(buf))+utf8.RuneLen(k) > limit:
		u.out.print("\a")
		return buf
	}
	u.out.print(string(k))
	return append(buf, k)
}

// confirmKey is the key that confirms an Always opened with open, as
// received: its other case. The a that opened it comes as A under Caps
// Lock, and so would the next one: confirming with the same key would
// make "a, a" a standing grant (red team AP F4).
func confirmKey(open rune) rune {
	if open == 'A' {
		return 'a'
	}
	return 'A'
}

// confirmingAlways reports whether the keys are in the Always-confirm
// mode: the current question's Always is shown and waits for alwaysKey.
func (u *ui) confirmingAlways() bool {
	return u.alwaysFor != "" && u.cur != nil && u.cur.q.Request.RequestID == u.alwaysFor && u.typing == nil && u.revoking == nil
}

// alwaysInput takes the key (or line) that answers the Always shown:
// alwaysKey (the other case of the key that opened it: a deliberate
// shift, not a slip or a second press of the same key) grants it, unless
// it came before the grant could be read (with the a, or within the key
// guard); any other key goes back to the keys, nothing sent.
func (u *ui) alwaysInput(ctx context.Context, ev inputEvent) {
	key := ev.key
	if !u.raw {
		key = 0
		if t := []rune(strings.TrimSpace(ev.line)); len(t) == 1 {
			key = t[0]
		}
	}
	if ev.together {
		key = 0 // a paste confirms nothing (red team AR R8)
	}
	at, want := u.alwaysAt, u.alwaysKey
	u.alwaysFor = ""
	u.out.breakLine()
	if key != want {
		u.out.println("  " + u.st.dim("Always not granted; back to the keys"))
		u.prompt()
		return
	}
	if g := u.c.o.KeyGuard; g > 0 && ev.at.Before(at.Add(g)) {
		u.alwaysFor, u.alwaysAt = u.cur.q.Request.RequestID, at
		u.out.println("  " + u.st.yellow("key "+strconv.QuoteRune(want)+" ignored: it came before the grant could be read; read it, then press "+string(want)+" again"))
		u.prompt()
		return
	}
	u.send(ctx, approverbot.ChoiceAlways, "")
}

// alwaysPrompt is the Always-confirm mode's key line: which key grants,
// said from the key that opened it.
func (u *ui) alwaysPrompt() string {
	how := "(shift+a)"
	if u.alwaysKey == 'a' {
		how = "(lower-case a: the key that opened this came as A — Caps Lock? — so A again does not grant)"
	}
	return "  " + u.st.bold("["+string(u.alwaysKey)+"]") + " " + how + " grants Always; any other key goes back, nothing sent " +
		promptTail(u.st, u.cur.q, u.c.o.Now())
}

// eraseCells moves the cursor back over the last n cells of the line,
// blanking them.
func eraseCells(n int) string {
	return strings.Repeat("\b", n) + strings.Repeat(" ", n) + strings.Repeat("\b", n)
}

// prompt (re)writes the prompt of the current question.
func (u *ui) prompt() {
	if u.revoking != nil {
		u.out.breakLine()
		u.out.print(u.revokePrompt() + string(u.revoking.buf))
		return
	}
	if u.cur == nil {
		return
	}
	u.out.breakLine()
	if u.typing != nil {
		if u.typing.confirm != nil {
			u.out.print(u.feedbackPrompt())
			return
		}
		u.out.print(u.feedbackPrompt() + string(u.typing.buf))
		return
	}
	if u.confirmingAlways() {
		u.out.print(u.keyLine())
		return
	}
	cols, _ := u.c.o.Size()
	if u.interleaved {
		u.interleaved = false
		u.out.print(recapBlock(u.st, u.cur.q, cols))
	}
	if u.replaced != "" {
		u.out.print(u.st.yellow(u.replaced) + "\n")
	}
	u.out.print(promptName(u.st, u.cur.q, cols) + "\n" + promptKeys(u.st, u.cur.q) + "\n" + u.keyLine())
}

// keyLine is the prompt's last line, the one the cursor sits on, which
// says what the keys do now. It is drawn from the mode the keys are in
// — by the prompt and by every timer redraw alike — so a redraw can never
// show one mode's line while the keys are in another (red team AP F4:
// the countdown put the plain prompt over "[A] grants Always"). "" in
// the modes whose line a redraw must not touch (a line being typed: the
// cursor is in it).
func (u *ui) keyLine() string {
	switch {
	case u.cur == nil || u.typing != nil || u.revoking != nil:
		return ""
	case u.confirmingAlways():
		return u.alwaysPrompt()
	}
	return promptTail(u.st, u.cur.q, u.c.o.Now())
}

// countDown redraws the key line with the time left, on a terminal and
// in a mode whose line may be redrawn (keyLine). Elsewhere the time left
// is as of the latest prompt.
func (u *ui) countDown() {
	if !u.raw || u.cur == nil || !u.out.mid || u.cur.q.ExpiresAt.IsZero() {
		return
	}
	if l := u.keyLine(); l != "" {
		u.out.print("\r\x1b[K" + l)
	}
}

func (u *ui) feedbackPrompt() string {
	if u.typing.confirm != nil {
		if !u.raw {
			return "  y approves this changed call once, e edits it again, anything else goes back (nothing sent) › "
		}
		return "  y approves this changed call once, e edits it again, Esc goes back (nothing sent) › "
	}
	if u.typing.edit != nil {
		return u.editPrompt()
	}
	if u.typing.answer {
		how := "Enter sends, Esc goes back"
		if !u.raw {
			how = "Enter sends"
		}
		return "  answer (" + answerHint(u.cur.q) + "; " + how + ") › "
	}
	what := "reject"
	if u.typing.mode == messages.RejectHard {
		what = "reject and stop"
	}
	how := "Enter sends, Esc goes back"
	if !u.raw {
		how = "Enter sends"
	}
	return "  " + what + ": feedback for the agent (optional; " + how + ") › "
}

// ask takes a new or updated question from the bot.
func (u *ui) ask(q approverbot.Question) {
	id := q.Request.RequestID
	if it, ok := u.items[id]; ok {
		changed := len(it.q.ApprovalsSoFar) != len(q.ApprovalsSoFar)
		it.q = q
		if it == u.cur && changed {
			u.out.println("  " + u.st.dim("approvals now: "+approvalsText(q)))
			u.prompt()
		}
		return
	}
	it := &item{q: q}
	u.items[id] = it
	if u.noInput {
		u.out.breakLine()
		u.out.print("\n" + renderQuestion(u.st, q, u.c.o.Now(), 0))
		return
	}
	u.queue = append(u.queue, it)
	if u.cur != nil || u.revoking != nil {
		u.out.println(u.st.cyan("+") + " new question: " + summary(q) +
			u.st.dim(fmt.Sprintf(" (team %s; %d waiting)", line(q.Team), len(u.queue))))
		u.interleaved = true
		u.prompt()
	}
}

// resolve takes a settlement from the bot: the question leaves the queue,
// or its prompt is abandoned.
func (u *ui) resolve(r messages.Resolved) {
	it, ok := u.items[r.RequestID]
	if !ok {
		// Never shown here, or settled by this terminal's own answer (its
		// log line is already printed).
		return
	}
	delete(u.items, r.RequestID)
	u.queue = slices.DeleteFunc(u.queue, func(x *item) bool { return x == it })
	u.out.println(settledLine(u.st, nameOf(it.q, &r), r))
	if it == u.cur {
		u.discard = u.raw && u.typing != nil
		u.cur, u.typing, u.lastGone = nil, nil, time.Now()
		u.taken, u.takenWhy = &it.q, "was "+settledWhy(r)
		u.out.println("  " + u.st.dim("prompt closed: it was settled elsewhere, nothing was sent from here"))
		u.prompt() // a grant id being typed
		return
	}
	u.interleaved = true
	u.prompt()
}

// hide takes a question the operator may no longer see (a later copy
// named answerers that do not admit them) off the queue and the prompt.
func (u *ui) hide(id string) {
	it, ok := u.items[id]
	if !ok {
		return
	}
	delete(u.items, id)
	u.queue = slices.DeleteFunc(u.queue, func(x *item) bool { return x == it })
	if it == u.cur {
		u.discard = u.raw && u.typing != nil
		u.cur, u.typing, u.lastGone = nil, nil, time.Now()
		u.taken, u.takenWhy = &it.q, "is no longer routed to you"
		u.out.println("  " + u.st.dim("prompt closed: this question is no longer routed to you, nothing was sent from here"))
	}
	u.prompt()
}

func (u *ui) inputEnded(err error) {
	u.noInput = true
	u.c.inputClosed.Store(true)
	u.c.o.Logger.Warn("terminal input ended; questions are shown but cannot be answered here", "err", err)
	u.out.println(u.st.yellow("!") + " input closed: questions are still shown here, but answer them on another channel")
	u.cur, u.typing, u.queue, u.revoking = nil, nil, nil, nil
}

// input handles one key (raw mode) or line (line mode).
func (u *ui) input(ctx context.Context, ev inputEvent) {
	if !u.raw {
		// The terminal echoed the line and its Enter.
		u.out.mid = false
	}
	if u.raw && (ev.key == keyInterrupt || (ev.key == keyEOF && u.typing == nil)) {
		u.out.println("^C")
		u.c.o.Interrupt()
		return
	}
	if u.discard {
		u.discard = ev.key != '\r' && ev.key != '\n' && ev.key != keyEscape
		return
	}
	switch {
	case u.confirmingAlways():
		u.alwaysInput(ctx, ev)
	case u.revoking != nil:
		u.revokeInput(ctx, ev)
	case u.typing != nil:
		u.feedbackInput(ctx, ev)
	case u.cur == nil:
		u.idleInput(ctx, ev)
	default:
		u.keyInput(ctx, ev)
	}
}

// idleInput takes a key while no question is waiting: the grants keys
// and help work; anything else says nothing is waiting.
func (u *ui) idleInput(ctx context.Context, ev inputEvent) {
	key, arg := ev.key, ""
	if !u.raw {
		t := strings.TrimSpace(ev.line)
		if t == "" {
			return
		}
		key, _ = utf8.DecodeRuneInString(t)
		arg = strings.TrimSpace(t[utf8.RuneLen(key):])
	} else if key == '\r' || key == '\n' || key == ' ' {
		return
	}
	key = unicode.ToLower(key)
	if u.grantsKey(ctx, key, arg) {
		return
	}
	if key == '?' && arg == "" {
		u.out.breakLine()
		u.out.print(idleHelpText)
		return
	}
	if !u.raw {
		u.out.println("  " + u.st.dim("no question is waiting (g lists grants, v revokes one, ? for help)"))
	}
}

// heldBack says why an answering key is not taken, or "": it came in a
// paste (red team AR R8: the answer is a key pressed on its own), or as
// the question under the prompt changed (the key guard).
func (u *ui) heldBack(ev inputEvent, key rune) string {
	switch {
	case ev.together && strings.ContainsRune("ysanxerk", key):
		return "it came in a paste; press the key on its own"
	case strings.ContainsRune("ysanxer", key) && ev.at.Before(u.guardUntil) && u.replaced != "":
		return "it came as this question took the place of the one you were reading, and may have been meant for that one; read this one, then press it again"
	case strings.ContainsRune("ysanxer", key) && ev.at.Before(u.guardUntil):
		return "it came as this question replaced the one before, and may have been meant for that one; read this one, then press it again"
	}
	return ""
}

func (u *ui) keyInput(ctx context.Context, ev inputEvent) {
	key := ev.key
	if !u.raw {
		t := strings.TrimSpace(ev.line)
		if t == "" {
			u.prompt()
			return
		}
		key, _ = utf8.DecodeRuneInString(t)
		if arg := strings.TrimSpace(t[utf8.RuneLen(key):]); arg != "" {
			if unicode.ToLower(key) == 'v' && u.grantsKey(ctx, 'v', arg) {
				return
			}
			u.out.println("  type one key, then Enter (? for help; v <id> revokes a grant)")
			u.prompt()
			return
		}
	} else if key == '\r' || key == '\n' || key == ' ' {
		return
	}
	received := key
	key = unicode.ToLower(key)
	if why := u.heldBack(ev, key); why != "" {
		u.out.println("  " + u.st.yellow("key "+strconv.QuoteRune(key)+" ignored: "+why))
		u.prompt()
		return
	}
	if u.raw && unicode.IsPrint(received) {
		// As received: Caps Lock shows (A, not a).
		u.out.print(string(received))
	}
	switch key {
	case 'y':
		u.send(ctx, approverbot.ChoiceOnce, "")
	case 's':
		u.send(ctx, approverbot.ChoiceSession, "")
	case 'a':
		if approverbot.Offered(u.cur.q, approverbot.ChoiceAlways, "") != nil {
			u.send(ctx, approverbot.ChoiceAlways, "") // says why not
			return
		}
		u.alwaysFor, u.alwaysAt, u.alwaysKey = u.cur.q.Request.RequestID, time.Now(), confirmKey(received)
		u.out.breakLine()
		al := view(u.cur.q).Always
		u.out.println("  " + u.st.bold("Always is a standing grant: ") + line(al.Short()))
		u.out.println("  " + line(al.ScopeLine()))
		u.prompt()
	case 'n':
		u.typing = &feedback{mode: messages.RejectSoft}
		u.prompt()
	case 'x':
		u.typing = &feedback{mode: messages.RejectHard}
		u.prompt()
	case 'e':
		u.startEdit()
	case 'r':
		if u.cur.q.AskUser == nil {
			u.out.println("  this call asks for an approval, not an answer (r answers a question the agent asks you)")
			u.prompt()
			return
		}
		u.typing = &feedback{answer: true}
		u.prompt()
	case 'k':
		u.skip()
	case 'g', 'v':
		u.grantsKey(ctx, key, "")
	case '?':
		u.out.breakLine()
		u.out.print(helpText(u.cur.q))
		u.prompt()
	default:
		u.out.println("  unknown key " + strconv.QuoteRune(key) + "; press ? for help")
		u.prompt()
	}
}

func (u *ui) feedbackInput(ctx context.Context, ev inputEvent) {
	if u.typing.confirm != nil {
		u.confirmInput(ctx, ev)
		return
	}
	if !u.raw {
		u.submit(ctx, ev.line)
		return
	}
	f := u.typing
	switch k := ev.key; {
	case k == '\r' || k == '\n':
		u.submit(ctx, string(f.buf))
	case k == keyEscape || k == keyEOF:
		u.typing = nil
		u.out.breakLine()
		u.out.println("  " + u.st.dim("back to the keys; nothing was sent"))
		u.prompt()
	case k == '\t':
		f.buf = u.typeKey(f.buf, ' ', f.limit())
	case editKey(k) || unicode.IsPrint(k):
		f.buf = u.typeKey(f.buf, k, f.limit())
	}
}

// submit sends the rejection being typed with its feedback, or the answer
// being typed.
func (u *ui) submit(ctx context.Context, text string) {
	if u.typing.edit != nil {
		u.submitEdit(ctx, text)
		return
	}
	if u.typing.answer {
		u.typing = nil
		u.out.breakLine()
		q := u.cur.q
		raw, err := approverbot.AnswerOf(q, approverbot.ParseAnswerLine(q, text))
		if err != nil {
			u.out.println("  " + line(strings.TrimPrefix(err.Error(), approverbot.ErrChoice.Error()+": ")))
			u.prompt()
			return
		}
		a, err := approverbot.ChooseAnswer(q, raw, u.op.ID, Name, u.c.o.Device)
		u.deliver(ctx, a, err)
		return
	}
	choice := approverbot.ChoiceReject
	if u.typing.mode == messages.RejectHard {
		choice = approverbot.ChoiceRejectStop
	}
	u.typing = nil
	u.out.breakLine()
	u.send(ctx, choice, text)
}

// skip moves the current question to the end of the queue.
func (u *ui) skip() {
	it := u.cur
	u.cur, u.lastGone = nil, time.Now()
	if n := len(u.queue); n > 0 {
		u.out.println("  " + u.st.dim(fmt.Sprintf("skipped; it comes back after %d other question(s)", n)))
	} else {
		u.out.println("  " + u.st.dim("skipped, but no other question is waiting"))
	}
	u.queue = append(u.queue, it)
}

// send answers the current question with choice and prints how it went.
// A choice the question does not offer is refused here, and the prompt
// stays.
func (u *ui) send(ctx context.Context, choice approverbot.Choice, feedback string) {
	a, err := approverbot.Choose(u.cur.q, choice, u.op.ID, Name, u.c.o.Device, feedback)
	u.deliver(ctx, a, err)
}

// deliver sends a (made by Choose, ChooseAnswer or ChooseEdited, err
// their error) for the current question and prints how it went.
func (u *ui) deliver(ctx context.Context, a approverbot.Answer, err error) {
	it := u.cur
	u.out.breakLine()
	if err != nil {
		u.out.println("  " + line(strings.TrimPrefix(err.Error(), approverbot.ErrChoice.Error()+": ")))
		u.prompt()
		return
	}
	rep, err := u.r.Respond(ctx, a)
	if ctx.Err() != nil {
		return
	}
	// The log line names the call, not only its tool (red team AG F2:
	// "✓ Bash approved (once)" under a notice of another Bash call).
	tool := nameOf(it.q, nil)
	if err != nil {
		u.out.println(u.st.yellow("!") + " " + tool + ": answer not sent: " + line(err.Error()))
		if errors.Is(err, approverbot.ErrUnknownQuestion) || errors.Is(err, approverbot.ErrUnknownApprover) {
			delete(u.items, a.RequestID)
			u.cur, u.lastGone = nil, time.Now()
			return
		}
		u.prompt()
		return
	}
	u.cur, u.lastGone = nil, time.Now()
	grant := ""
	switch v := view(it.q); a.Choice {
	case approverbot.ChoiceSession:
		grant = grantLogText(v.Session)
	case approverbot.ChoiceAlways:
		grant = grantLogText(v.Always)
	}
	switch {
	case !rep.Applied && a.UpdatedArguments != "" && rep.State == messages.StatePending:
		// A change the brokers refused (the policy denies the changed
		// call): the question is still open, and still this prompt's.
		u.out.println(notAppliedLine(u.st, tool, rep))
		u.cur = it
		u.prompt()
	case !rep.Applied:
		u.out.println(notAppliedLine(u.st, tool, rep))
		if rep.State.Final() {
			delete(u.items, a.RequestID)
		}
	case rep.State == messages.StatePending:
		why := rep.Reason
		if why == "" {
			why = "approval counted"
		}
		u.out.println(answeredLine(u.st, tool, a, grant) + u.st.dim(" — "+line(why)+"; waiting for other approvers"))
	default:
		u.out.println(answeredLine(u.st, tool, a, grant))
		delete(u.items, a.RequestID)
	}
}
