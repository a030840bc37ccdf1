package terminal

import (
	"bufio"
	"context"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Keys with a meaning of their own in raw mode.
const (
	keyInterrupt = 0x03 // Ctrl-C
	keyEOF       = 0x04 // Ctrl-D
	keyBackspace = 0x08 // Ctrl-H
	keyKill      = 0x15 // Ctrl-U: erase the line
	keyEscape    = 0x1b
	keyDelete    = 0x7f // what most terminals send for Backspace
)

// inputEvent is one thing the operator typed: a key (raw mode), a line
// (line mode), or the end of the input.
type inputEvent struct {
	key  rune
	line string
	err  error
	at   time.Time // when it was read
	// together: the key came inside a bracketed paste — a paste, not a
	// key pressed (red team AR R8: pasting "sudo systemctl restart
	// nginx" answered s, Session).
	together bool
}

// reader turns the input stream into events on its own goroutine, so the
// prompt can wait for a key and for questions at once.
type reader struct {
	in     io.Reader
	raw    bool
	events chan inputEvent
	done   chan struct{}
}

func newReader(in io.Reader, raw bool) *reader {
	return &reader{in: in, raw: raw, events: make(chan inputEvent), done: make(chan struct{})}
}

// run reads until the input ends or ctx is done and a read returns.
func (r *reader) run(ctx context.Context) {
	defer close(r.done)
	if r.raw {
		r.keys(ctx)
	} else {
		r.lines(ctx)
	}
}

func (r *reader) send(ctx context.Context, ev inputEvent) bool {
	ev.at = time.Now()
	select {
	case r.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// keys reads raw keystrokes: one event per rune. Escape sequences (arrow
// and function keys) are dropped whole so their tail is not read as keys; a
// lone Escape is a key.
//
// A paste is not keys pressed: the terminal is asked to bracket pastes
// (ESC [ 200 ~ … ESC [ 201 ~), and the keys inside the brackets are marked
// together.
func (r *reader) keys(ctx context.Context) {
	buf := make([]byte, 256)
	var partial []byte
	pasting := false
	for {
		n, err := r.in.Read(buf)
		data := append(partial, buf[:n]...)
		partial = nil
		together := pasting
		for len(data) > 0 {
			if data[0] == keyEscape {
				k := escapeLen(data)
				switch seq := string(data[:k]); {
				case seq == "\x1b[200~":
					pasting, together = true, true
				case seq == "\x1b[201~":
					pasting = false
				case k == 1 && !r.send(ctx, inputEvent{key: keyEscape}):
					return
				}
				data = data[k:]
				continue
			}
			if !utf8.FullRune(data) && err == nil {
				partial = append([]byte(nil), data...)
				break
			}
			c, size := utf8.DecodeRune(data)
			if !r.send(ctx, inputEvent{key: c, together: together || pasting}) {
				return
			}
			data = data[size:]
		}
		if err != nil {
			r.send(ctx, inputEvent{err: err})
			return
		}
	}
}

// escapeLen is the length of the escape sequence data starts with: 1 for a
// lone Escape, the whole CSI (ESC [ … final) or SS3 (ESC O x) sequence, or
// 2 for Alt+key. An incomplete sequence is taken whole.
func escapeLen(data []byte) int {
	if len(data) == 1 {
		return 1
	}
	switch data[1] {
	case '[':
		for i := 2; i < len(data); i++ {
			if data[i] >= 0x40 && data[i] <= 0x7e {
				return i + 1
			}
		}
		return len(data)
	case 'O':
		return min(3, len(data))
	}
	return 2
}

// lines reads one event per line (a key followed by Enter, or a feedback
// line), without the line end.
func (r *reader) lines(ctx context.Context) {
	br := bufio.NewReader(r.in)
	for {
		s, err := br.ReadString('\n')
		if s != "" || err == nil {
			if !r.send(ctx, inputEvent{line: strings.TrimRight(s, "\r\n")}) {
				return
			}
		}
		if err != nil {
			r.send(ctx, inputEvent{err: err})
			return
		}
	}
}
