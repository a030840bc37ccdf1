package shell

import (
	neturl "net/url"
	"path"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// curlValues reads the values of curl's options whose syntax holds file
// names: the forms of -F/--form (which the table gives no effect of
// their own), the format of -w/--write-out, and the globbed file name of
// -T/--upload-file; and the protocols of its URLs (curlScheme).
func (u *progUse) curlValues() {
	for _, op := range u.operands {
		u.curlScheme(op)
	}
	for _, s := range u.seen {
		if s.value == nil {
			continue
		}
		switch s.opt.name {
		case "--url":
			u.curlScheme(*s.value)
		case "--proto-redir":
			u.curlRedirProtocols(*s.value)
		case "-F", "--form":
			u.curlForm(*s.value)
		case "-w", "--write-out":
			u.curlWriteOut(*s.value)
		case "-T", "--upload-file":
			// curl -T '{a,~/.ssh/id_rsa}' uploads both: curl expands {…}
			// and […] in the name as in a URL.
			if s.value.lit && strings.ContainsAny(s.value.text, "{[") {
				u.setAsk("curl " + s.opt.name + " " + shQuoteShort(s.value.text) + " expands {…} or […] in the file name, so the files it uploads are not the text")
			}
		}
	}
}

// curlWebSchemes are the protocols curl may speak without a question:
// the web's (WebSocket's too), whose requests the rule allowing curl
// means. Any other
// (gopher://127.0.0.1:6379/_FLUSHALL writes any bytes to a local Redis,
// dict://, telnet://, smtp://, ldap://) reaches services the rules cannot
// see, so it asks; file: asks by the table.
var curlWebSchemes = map[string]bool{"http": true, "https": true, "ftp": true, "ftps": true, "ws": true, "wss": true}

// curlScheme asks for a literal URL whose scheme, as curl reads it (any
// case, "scheme:/" as well as "scheme://"), is not the web's. A URL
// without one is http's; a URL that is not a literal asks by the table.
func (u *progUse) curlScheme(w shWord) {
	if !w.lit || w.g != nil {
		return
	}
	scheme, rest, ok := strings.Cut(w.text, ":")
	if !ok || !strings.HasPrefix(rest, "/") || !isURLScheme(scheme) {
		scheme = curlGuessedScheme(w.text)
	}
	if scheme == "" || curlWebSchemes[strings.ToLower(scheme)] {
		return
	}
	u.setAsk("curl " + shQuoteShort(w.text) + " speaks " + strings.ToLower(scheme) +
		", a protocol other than the web's, which can reach a local service the policy cannot see")
}

// curlGuessedScheme is the protocol curl guesses for a URL without a
// scheme from its host name's first label, as curl does (any case):
// dict.x is DICT, ldap.x LDAP, imap.x IMAP, smtp.x SMTP, pop3.x POP3,
// ftp.x FTP; "" (http) for any other.
func curlGuessedScheme(url string) string {
	host := url
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if d, err := neturl.PathUnescape(host); err == nil {
		host = d // curl decodes the host name first: dic%74.x is dict.x
	}
	host = strings.ToLower(host)
	for _, p := range []string{"ftp", "dict", "ldap", "imap", "smtp", "pop3"} {
		if strings.HasPrefix(host, p+".") {
			return p
		}
	}
	return ""
}

// curlRedirProtocols asks for a --proto-redir that lets a redirect
// follow to a protocol other than the web's (+dict, =all, all): the
// server chooses where curl goes next. A protocol removed (-dict) is
// no risk.
func (u *progUse) curlRedirProtocols(v shWord) {
	if !v.lit || v.g != nil {
		u.setAsk("curl --proto-redir " + shQuoteShort(v.text) + " names protocols the policy cannot read")
		return
	}
	for p := range strings.SplitSeq(v.text, ",") {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "-") {
			continue
		}
		p = strings.ToLower(strings.TrimLeft(p, "+="))
		if p != "" && !curlWebSchemes[p] {
			u.setAsk("curl --proto-redir " + shQuoteShort(v.text) + " lets a redirect lead to " + p +
				", a protocol other than the web's, which can reach a local service the policy cannot see")
			return
		}
	}
}

// isURLScheme reports whether s has a URL scheme's syntax (RFC 3986:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
func isURLScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// curlForm records the files a -F NAME=CONTENT value reads, as curl's
// form parser reads it: @FILE[,FILE…] uploads each FILE, <FILE sends its
// content, and a ;headers=@FILE (or <FILE) parameter of any part reads
// FILE as the part's headers; blanks around a name are dropped, and
// parameter names are matched in any case. curl also takes a name in
// double quotes with \" and \\ escapes, within which ';' and ',' are
// plain characters: a value with a quote that reads a file asks rather
// than be read one way when curl reads it another. A value that is not a
// literal may name any file.
func (u *progUse) curlForm(v shWord) {
	if !v.lit {
		// -F "f=@$PWD/key": a file named by a value the policy cannot
		// see is any file (computed: it meets every read rule).
		u.reads = append(u.reads, shWord{text: v.text, g: globs.Glob{globs.AnyRun}, computed: true})
		return
	}
	_, content, ok := strings.Cut(v.text, "=")
	if !ok {
		return
	}
	lower := strings.ToLower(content)
	files := strings.HasPrefix(content, "@") || strings.HasPrefix(content, "<")
	if strings.Contains(content, `"`) && (files || strings.Contains(lower, "headers=")) {
		u.setAsk("curl " + shQuoteShort(v.text) + " has a quoted form value, whose file names curl unquotes in a way the policy does not read")
		return
	}
	parts := []string{content}
	switch {
	case strings.HasPrefix(content, "@"):
		parts = strings.Split(content[1:], ",")
	case strings.HasPrefix(content, "<"):
		parts = []string{content[1:]}
	}
	for _, p := range parts {
		params := strings.Split(p, ";")
		if files {
			u.curlFormFile(params[0])
		}
		for _, q := range params[1:] {
			q = strings.TrimLeft(q, " \t\n\r\f\v")
			if len(q) > 8 && strings.EqualFold(q[:8], "headers=") && (q[8] == '@' || q[8] == '<') {
				u.curlFormFile(q[9:])
			}
		}
	}
}

// curlFormFile records the read of a file name of a form value, without
// the blanks curl drops around it.
func (u *progUse) curlFormFile(f string) {
	if f = strings.TrimSpace(f); f != "" {
		u.reads = append(u.reads, shWord{text: f, lit: true})
	}
}

// curlWriteOut judges a -w/--write-out format: since curl 8.3 a
// %output{FILE} (or %output{>>FILE}) in it sends the rest of the output
// to FILE, a write; a format read from a file (@FILE, @- for standard
// input) may hold one the policy cannot see, and so may a value that is
// not a literal: both ask.
func (u *progUse) curlWriteOut(v shWord) {
	switch {
	case !v.lit:
		u.setAsk("curl -w takes a format that is not a literal, which may hold %output{FILE}, a write of FILE")
		return
	case strings.HasPrefix(v.text, "@"):
		u.setAsk("curl -w " + shQuoteShort(v.text) + " reads its format from a file the policy cannot see, which may hold %output{FILE}, a write of FILE")
		return
	}
	s := v.text
	for {
		i := strings.Index(strings.ToLower(s), "%output{")
		if i < 0 {
			return
		}
		s = s[i+len("%output{"):]
		end := strings.IndexByte(s, '}')
		if end < 0 {
			u.setAsk("curl -w has an %output{ the policy cannot read")
			return
		}
		f := strings.TrimPrefix(s[:end], ">>")
		if f == "" {
			u.setAsk("curl -w has an %output{} the policy cannot place")
			return
		}
		u.writes = append(u.writes, shWord{text: f, lit: true})
		s = s[end+1:]
	}
}

// wgetNames records the files wget writes when no -O names one: each URL
// operand's last path part ("index.html" for a directory), under -P DIR
// (wget http://h/.env writes ./.env). The options that make wget build
// directories from the URL or take names from the server (-x, -r, -m, -p,
// --content-disposition, --trust-server-names) ask, as does a URL the
// policy cannot read or a list of URLs from a file.
func (u *progUse) wgetNames() {
	var dir *shWord
	index := "index.html"
	for _, s := range u.seen {
		switch s.opt.name {
		case "-O", "--output-document", "--spider":
			return
		case "-P", "--directory-prefix":
			dir = s.value
		case "--default-page":
			if s.value == nil || !s.value.lit {
				u.setAsk("wget --default-page names the file it writes for a directory's URL, which the policy cannot read")
				return
			}
			index = s.value.text
		case "-x", "--force-directories", "-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites",
			"--content-disposition", "--trust-server-names", "-i", "--input-file", "-B", "--base":
			u.setAsk("wget " + s.opt.name + " writes files and directories named after the URLs or by the server, which the policy cannot place")
			return
		}
	}
	for _, op := range u.operands {
		if !op.lit || op.g != nil {
			u.setAsk("wget writes a file named after the URL " + shQuoteShort(op.text) + ", which the policy cannot read")
			return
		}
		name := wgetName(op.text, index)
		if dir != nil {
			if !dir.lit || dir.g != nil {
				u.setAsk("wget -P " + shQuoteShort(dir.text) + " writes where the policy cannot place")
				return
			}
			name = joinPath(dir.text, name)
		}
		u.writes = append(u.writes, shWord{text: name, lit: true})
	}
}

// wgetName is the local name wget gives a URL's document: the last part
// of its path without the query, percent-decoded as wget decodes it
// (%2ebashrc is .bashrc), or index (index.html, or --default-page's).
func wgetName(url, index string) string {
	s := url
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	_, p, ok := strings.Cut(s, "/")
	if !ok || p == "" || strings.HasSuffix(p, "/") {
		return index
	}
	name := path.Base(p)
	if d, err := neturl.PathUnescape(name); err == nil {
		name = path.Base("/" + d)
	}
	if name == "." || name == ".." || name == "/" || name == "" {
		return index
	}
	return name
}
