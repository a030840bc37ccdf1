package shell

import "strings"

// CommandText is the text of a command's words as bash reads them back:
// joined by single spaces, each word that bash would not read as that one
// word by itself single-quoted (QuoteWord). Commands with different words
// have different texts — git clean -fdx '-e keep --dry-run' is not git
// clean -fdx -e keep --dry-run — so an approver reads the words that run,
// and a rule or grant written for one never matches the other.
func CommandText(words []string) string {
	n := len(words)
	quote := false
	for _, w := range words {
		n += len(w)
		quote = quote || w == "" || needsQuote(w) && w != "[" && w != "]" && w != "[[" && w != "]]"
	}
	if !quote {
		return strings.Join(words, " ")
	}
	var b strings.Builder
	b.Grow(n + 8)
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(QuoteWord(w))
	}
	return b.String()
}

// QuoteWord returns w as bash reads it back as one word: itself when every
// byte is a letter, a digit or one of _@%+=:,./-~^ (a ~ not first), or
// it is [ or ] (test's, no pattern alone), else single-quoted, a quote in
// it written '\”. The empty word is ”.
func QuoteWord(w string) string {
	if w == "" {
		return "''"
	}
	if !needsQuote(w) || w == "[" || w == "]" || w == "[[" || w == "]]" {
		return w // [ and ] alone are no pattern: test's words
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func needsQuote(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_@%+=:,./-^", c) >= 0:
		case c == '~' && i > 0:
		default:
			return true
		}
	}
	return false
}
