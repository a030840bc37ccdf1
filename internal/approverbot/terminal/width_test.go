package terminal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
)

// rawOutput is everything the channel wrote, escapes and carriage returns
// included.
func (s *screen) rawOutput() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}

// emulate plays out on a terminal width columns wide and returns its rows:
// printable runes wrap at the right edge, "\r" returns to column 0, "\n"
// moves down, "\b" back, ESC [ … K erases to the end of the row, other
// escape sequences (colours) change nothing on the rows.
func emulate(out string, width int) []string {
	var rows [][]rune
	row, col := 0, 0
	grow := func() {
		for len(rows) <= row {
			rows = append(rows, nil)
		}
	}
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\r':
			col = 0
		case r == '\n':
			row++
		case r == '\b':
			col = max(col-1, 0)
		case r == '\x1b' && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < '@' || rs[j] > '~') {
				j++
			}
			if j < len(rs) && rs[j] == 'K' {
				grow()
				if col < len(rows[row]) {
					rows[row] = rows[row][:col]
				}
			}
			i = j
		default:
			w := 1
			if r == '⏳' || r >= 0x1F300 {
				w = 2
			}
			if col+w > width {
				row, col = row+1, 0
			}
			grow()
			for len(rows[row]) < col+w {
				rows[row] = append(rows[row], ' ')
			}
			rows[row][col] = r
			col += w
		}
	}
	out2 := make([]string, len(rows))
	for i, r := range rows {
		out2[i] = string(r)
	}
	return out2
}

// The countdown rewrites the line the cursor waits on every tick. At any
// width of 60 columns or more the screen then shows the question's keys
// once and one line with the time left, however often it was redrawn: no
// wrapped remains of earlier redraws.
func TestTerminalCountdownRedrawsInPlaceAtAnyWidth(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	req := pending(t, p, p.Agent("sess-width", "agent-1"), "default", "req-width", "make deploy --environment production --wait")
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{Tick: 10 * time.Millisecond})
	tp.out.expect("› ")
	deadline := time.Now().Add(waitFor)
	for strings.Count(tp.out.rawOutput(), "\r\x1b[K") < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("the countdown was not redrawn 20 times:\n%q", tp.out.rawOutput())
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := tp.out.rawOutput()
	for _, width := range []int{60, 80, 100, 132, 200} {
		rows := emulate(out, width)
		keys, left := 0, 0
		for _, r := range rows {
			if strings.Contains(r, "[y] once") {
				keys++
			}
			if strings.Contains(r, " left ›") {
				left++
			}
		}
		if keys != 1 || left != 1 {
			t.Errorf("at %d columns the screen shows the keys %d times and the time left %d times, want once each:\n%s",
				width, keys, left, strings.Join(rows, "\n"))
		}
	}
	tp.typeKeys(t, "y")
	req.Wait(t)
}
