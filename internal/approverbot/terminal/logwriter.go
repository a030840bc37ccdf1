package terminal

import (
	"bytes"
	"io"
	"sync"
)

// LogWriter returns w for the bot's logs when they share the operator's
// terminal: while the channel holds the terminal in raw mode, "\n" no longer
// returns the cursor to the start of the line, so LogWriter ends lines with
// "\r\n" (harmless in normal mode). Writes are serialized.
func LogWriter(w io.Writer) io.Writer { return &crlfWriter{w: w} }

type crlfWriter struct {
	mu sync.Mutex
	w  io.Writer
}

var (
	lf   = []byte("\n")
	crlf = []byte("\r\n")
)

// Write implements io.Writer; it reports len(p) written when the
// translated bytes were all written.
func (c *crlfWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := bytes.ReplaceAll(bytes.ReplaceAll(p, crlf, lf), lf, crlf)
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
