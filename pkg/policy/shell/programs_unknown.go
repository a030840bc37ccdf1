package shell

import (
	neturl "net/url"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// unknownProgram judges a command whose program the table does not know
// (base32, zcat, iconv, a project's ./script.sh), or knows only the arity
// of (gh, aws: arityOnly): what it does with its
// arguments is unknown, so the closed reading is that every operand is a
// path it reads — base32 ~/.ssh/id_rsa and zcat -f ~/.netrc meet the
// read rules as cat does. An operand is a word that does not start with
// '-' (every word after --), and the value of a --name=VALUE word. Reads
// are judged by the deny and ask rules only, so an operand no rule names
// (gh-like verbs, numbers, URLs) costs nothing. A directory operand is
// read as itself and as a directory the program may walk (Command.Walks):
// the rules anchored under it meet it (ag x ~ meets ~/.ssh/**), the
// floating ones do not (a limit: eslint . would meet **/.env in every
// project otherwise). Shell builtins are left out: their
// operands are names, numbers or directories the analysis models itself
// (cd, test, kill, export). A variable named as the program's options
// (XZ_OPT for xz, GZIP for gzip: optionVarOf), set for the command or
// exported, asks. A word may name a file inside itself (k=@FILE,
// file://FILE: embeddedPaths), which is read too.
func (a *shAnalyzer) unknownProgram(ci int, words []shWord, fr shFrame) {
	c := &a.res.Commands[ci]
	if shShadowable[c.Name] || shOtherBuiltins[c.Name] {
		return
	}
	a.info[ci].envProg = c.Name
	c.Walks = true
	c.RunsFiles = true // what it does is not known: it may be in files
	if r := a.splitWords(words); r != "" {
		c.Unanalysable = r // o="-r ~/.ssh"; prog $o: words the reads below do not see
		return
	}
	for _, w := range fr.wrappers {
		name, ok := envAssignedName(w)
		switch {
		case !ok:
		case optionVarOf(c.Name, name):
			c.Unanalysable = optionVarReason(c.Name, name)
			return
		case !envInertFor(nil, name):
			// A program the table does not know may read any variable
			// as settings, options or the program to run (MAVEN_OPTS,
			// JAVA_TOOL_OPTIONS, RUSTUP_TOOLCHAIN): closed, as an
			// entry's environment is (judgeEnv).
			c.Unanalysable = notUnderstood(c.Name, "environment variable", name)
			return
		}
	}
	reads := unknownReads(words[1:])
	reads = append(reads, credentialFiles(c.Name, words)...)
	a.recordReads(c, fr.feedWords(reads))
	// ag x, ag -u PATTERN: a program that walks a tree walks the working
	// directory when its operands are not paths, or vanish. Not a write:
	// every program would write where it runs (Command.CwdReads).
	c.CwdReads = append(c.CwdReads, len(c.Reads))
	a.recordReads(c, []shWord{{text: ".", lit: true}})
}

// credentialStores are the files a CLI's verb reads its stored
// credentials from and prints them (aws configure get
// aws_secret_access_key, kubectl config view --raw, gh auth token): a rule
// on those files meets the verb, as it meets cat of them. Each program's
// documented default location; one moved by a variable (AWS_CONFIG_FILE,
// KUBECONFIG, GH_CONFIG_DIR) set in the host's environment is not seen.
var credentialStores = map[string][]string{
	"aws configure":          {"~/.aws/credentials", "~/.aws/config"},
	"kubectl config":         {"~/.kube/config"},
	"gh auth":                {"~/.config/gh/hosts.yml"},
	"gcloud auth":            {"~/.config/gcloud/credentials.db", "~/.config/gcloud/access_tokens.db"},
	"gcloud config":          {"~/.config/gcloud/configurations"},
	"az account":             {"~/.azure/msal_token_cache.json", "~/.azure/azureProfile.json"},
	"docker compose config":  {".env"},
	"docker-compose config":  {".env"},
	"npm config":             {"~/.npmrc", ".npmrc"},
	"npm get":                {"~/.npmrc", ".npmrc"}, // npm config get (red team U8)
	"npm set":                {"~/.npmrc", ".npmrc"}, // npm config set
	"pnpm config":            {"~/.npmrc", ".npmrc"},
	"yarn config":            {"~/.yarnrc.yml", ".yarnrc.yml", "~/.npmrc", ".npmrc"},
	"gh config":              {"~/.config/gh/hosts.yml", "~/.config/gh/config.yml"},
	"docker login":           {"~/.docker/config.json"},
	"pnpm c":                 {"~/.npmrc", ".npmrc"}, // pnpm config (red team X5)
	"heroku auth:token":      {"~/.netrc"},
	"docker compose convert": {".env"},
	"podman compose config":  {".env"},
	"podman-compose config":  {".env"},
	"oc whoami":              {"~/.kube/config"}, // -t prints the token
	// Verbs that mint a token from the stored credentials and print it
	// (red team Z6).
	"aws sts get-session-token":                {"~/.aws/credentials", "~/.aws/config"},
	"aws sts assume-role":                      {"~/.aws/credentials", "~/.aws/config"},
	"aws sts get-federation-token":             {"~/.aws/credentials", "~/.aws/config"},
	"aws ecr get-login-password":               {"~/.aws/credentials", "~/.aws/config"},
	"aws ecr-public get-login-password":        {"~/.aws/credentials", "~/.aws/config"},
	"aws codeartifact get-authorization-token": {"~/.aws/credentials", "~/.aws/config"},
	"kubectl create token":                     {"~/.kube/config"},
	"npm token":                                {"~/.npmrc", ".npmrc"},
	"heroku auth":                              {"~/.netrc"},
	"doctl auth":                               {"~/.config/doctl/config.yaml"},
	"vault token":                              {"~/.vault-token"},
	"vault print":                              {"~/.vault-token"},
}

// credentialFiles returns the credential stores the command's verb reads
// (credentialStores), as literal reads. The verb may come after options
// whose values the table does not know (kubectl --context prod config
// view), so any word, or two words in a row, that make a key count. A
// verb that prints none of the store's secrets (credentialQuiet: gh auth
// status, kubectl config current-context, view without --raw) reads
// nothing.
func credentialFiles(name string, words []shWord) []shWord {
	var files []string
	var prev string
	at := 0 // index of the key's last word
	for i, w := range words[1:] {
		if files != nil {
			break
		}
		if !w.lit || strings.HasPrefix(w.text, "-") {
			continue
		}
		if prev != "" {
			files = credentialStores[name+" "+prev+" "+w.text]
		}
		if files == nil {
			files = credentialStores[name+" "+w.text]
		}
		prev, at = w.text, i+1
	}
	if files == nil || credentialQuiet(name, words, at) {
		return nil
	}
	var out []shWord
	for _, f := range files {
		out = append(out, shWord{text: f, lit: true})
	}
	return out
}

// credentialQuiet reports a credential verb that prints none of its
// store's secrets: the command is exactly the program, its key and one of
// these verbs — no option anywhere (gh auth status -t, kubectl config view
// --raw or --flatten print secrets, and an option the policy does not know
// may take the next word as its value: kubectl config --user
// current-context view --raw runs view).
func credentialQuiet(name string, words []shWord, at int) bool {
	keyLen := 2
	if credentialStores[name+" "+words[at].text] != nil {
		keyLen = 1
	}
	if at+1 >= len(words) || len(words) != 1+keyLen+1 || !words[at+1].lit {
		return false // (npm pkg get: the key is not at the start)
	}
	switch name + " " + words[at].text + " " + words[at+1].text {
	case "gh auth status", "kubectl config view", "kubectl config current-context", "kubectl config get-contexts",
		"kubectl config get-clusters", "kubectl config get-users", "aws configure list", "aws configure list-profiles",
		"gcloud config list", "az account show", "az account list":
		return true
	}
	return false
}

// unknownReads returns what a program reads by a closed reading of its
// words when the table does not say: every operand (a word that does not
// start with '-', every word after --), the value of a --name=VALUE word,
// and the files a word names inside itself (embeddedPaths).
func unknownReads(words []shWord) []shWord {
	var reads []shWord
	dashes := false
	for _, w := range words {
		if w.lit {
			reads = append(reads, embeddedPaths(w.text)...)
		} else if strings.Contains(w.text, "@") || strings.Contains(strings.ToLower(w.text), "file:") {
			// k=@$PWD/x: a path the policy cannot place, any path.
			reads = append(reads, shWord{text: w.text, g: globs.Glob{globs.AnyRun}, computed: true})
		}
		switch {
		case !dashes && !w.lit && w.g != nil:
			reads = append(reads, w)
			reads = append(reads, optionValueReads(w)...)
			reads = append(reads, embeddedValueReads(w)...)
		case dashes || !w.lit || len(w.text) < 2 || w.text[0] != '-':
			if w.text != "" {
				reads = append(reads, w)
			}
		case w.text == "--":
			dashes = true
		case strings.HasPrefix(w.text, "--"):
			if _, v, ok := strings.Cut(w.text, "="); ok && v != "" {
				reads = append(reads, shWord{text: v, lit: true})
			}
		case len(w.text) > 2:
			// -r/path, -v/home/dev/.ssh:/k: a short option's value
			// attached (or flags run together, read as a name no rule
			// holds). Its value may start after any letter of a run of
			// flags (iconv -co.git/config is -c -o .git/config): each
			// suffix after a letter of the run, up to its first other
			// character, is read.
			for k := 2; k < len(w.text); k++ {
				reads = append(reads, shWord{text: w.text[k:], lit: true})
				reads = append(reads, embeddedPaths(w.text[k:])...)
				if !isOptionLetter(w.text[k]) {
					break
				}
			}
		}
	}
	return reads
}

// optionValueReads returns the values a word that is not a literal may
// give an option, as unknownReads reads a literal's: after the '=' of
// --name=VALUE, and each suffix after a letter of a run of short options
// (ssh-keygen -yf$HOME/.ssh/id_ed25519 reads $HOME/.ssh/id_ed25519).
func optionValueReads(w shWord) []shWord {
	g := w.g
	if len(g) < 3 || !g[0].Lit() || g[0].R != '-' {
		return nil
	}
	val := func(at int) shWord {
		return shWord{text: w.text, g: g[at:], computed: w.computed, vars: w.vars}
	}
	if g[1].Lit() && g[1].R == '-' {
		// --name=VALUE, also with an expansion in the name
		// (--in${x}=FILE): after the first '='.
		for i := 2; i < len(g); i++ {
			if g[i].Lit() && g[i].R == '=' {
				if i+1 < len(g) {
					return []shWord{val(i + 1)}
				}
				return nil
			}
		}
		return nil
	}
	var out []shWord
	for k := 2; k < len(g); k++ {
		out = append(out, val(k))
		if !g[k].Lit() || g[k].R >= 0x80 || !isOptionLetter(byte(g[k].R)) {
			break
		}
	}
	return out
}

// embeddedValueReads returns what a word that is not a literal may name
// after a '=', ',' or ':' it spells (in=$HOME/x, -in=$X, src=$HOME/.ssh/k
// in id=x,src=…, text:$F), as embeddedPaths reads a literal's.
func embeddedValueReads(w shWord) []shWord {
	var out []shWord
	for i, t := range w.g {
		if len(out) >= 16 {
			break
		}
		if t.Lit() && (t.R == '=' || t.R == ',' || t.R == ':') && i+1 < len(w.g) {
			out = append(out, shWord{text: w.text, g: w.g[i+1:], computed: w.computed, vars: w.vars})
		}
	}
	return out
}

// isOptionLetter reports a character a short option may be spelled with.
func isOptionLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// embeddedPaths returns the paths a word of an unknown program may name
// inside itself, in the notations programs use for "the content of this
// file": after an '@' (curl's and gh api's -F k=@FILE, httpie's
// field@FILE and field=@FILE, @FILE), and after file:// or fileb:// (the
// AWS CLI); and in the notations of mounts and key-value lists: each
// comma-separated part's value after '=' (helm --set-file k=FILE, docker
// --mount type=bind,src=DIR) and what comes before a ':' (docker -v
// DIR:/k). An e-mail address, a URL's user@host or scheme reads a name no
// rule holds.
func embeddedPaths(s string) []shWord {
	var out []shWord
	if _, p, ok := strings.Cut(s, "@"); ok && p != "" {
		out = append(out, shWord{text: p, lit: true})
	}
	if strings.ContainsAny(s, "=,:") {
		for part := range strings.SplitSeq(s, ",") {
			if _, v, ok := strings.Cut(part, "="); ok && v != "" {
				part = v
				out = append(out, shWord{text: v, lit: true})
				if i := strings.LastIndexByte(v, '='); i >= 0 && i+1 < len(v) {
					// --from-file=k=FILE, volume-opt=device=DIR.
					part = v[i+1:]
					out = append(out, shWord{text: part, lit: true})
				}
			}
			if a, _, ok := strings.Cut(part, ":"); ok && a != "" {
				out = append(out, shWord{text: a, lit: true})
			} else if part != s && !ok {
				out = append(out, shWord{text: part, lit: true})
			}
		}
	}
	out = append(out, fileURLPaths(s)...)
	return out
}

// fileURLPaths returns the local paths the file: URLs in s name, as URL
// readers take them: the scheme in any case (FILE:), "file:/p",
// "file:///p", "file://localhost/p" and "file://HOST/p" all name /p,
// percent-escapes decoded (%2e is '.'); the AWS CLI's fileb:// names a
// path as written (fileb://key.pem is ./key.pem), as does file:// before
// a relative one.
func fileURLPaths(s string) []shWord {
	var out []shWord
	lower := strings.ToLower(s)
	for off := 0; ; {
		i := strings.Index(lower[off:], "file")
		if i < 0 {
			return out
		}
		i += off
		off = i + 4
		rest := s[i+4:]
		if strings.HasPrefix(strings.ToLower(rest), "b:") {
			rest = rest[1:]
		}
		if !strings.HasPrefix(rest, ":") {
			continue
		}
		rest = rest[1:]
		var p string
		switch {
		case strings.HasPrefix(rest, "//"):
			after := rest[2:]
			if j := strings.IndexByte(after, '/'); j >= 0 && !strings.ContainsAny(after[:j], "~.") {
				p = after[j:] // file:///p, file://localhost/p
			} else {
				p = after // file://key.pem, file://~/x: as written
			}
		case strings.HasPrefix(rest, "/"):
			p = rest
		default:
			continue
		}
		if i := strings.IndexAny(p, "#?"); i >= 0 {
			// A URL reader drops the fragment, and most the query.
			out = append(out, shWord{text: p[:i], lit: true})
			if d, err := neturl.PathUnescape(p[:i]); err == nil && d != p[:i] {
				out = append(out, shWord{text: d, lit: true})
			}
		}
		if d, err := neturl.PathUnescape(p); err == nil && d != p {
			out = append(out, shWord{text: d, lit: true})
		}
		if p != "" {
			out = append(out, shWord{text: p, lit: true})
		}
	}
}

// arityOnly reports an entry that says nothing of the program's words
// but how many form its prefix (gh: {arity: 3}, aws, gcloud, brew, mvn):
// its operands are judged as an unknown program's (unknownProgram), so
// gh gist create ~/.ssh/id_rsa and aws s3 cp ~/.aws/credentials s3://b
// meet the read rules.
func (s *progSpec) arityOnly() bool {
	if len(s.options) > 0 || len(s.global) > 0 || len(s.operands) > 0 || s.hook != "" || s.wrapper != nil ||
		s.complete || s.closed || s.elevated || s.optionsFirst || s.style != styleGNU {
		return false
	}
	for _, sub := range s.subs {
		if !sub.arityOnly() {
			return false
		}
	}
	return true
}

// shOtherBuiltins are the bash builtins and keywords, besides those a
// function may shadow (shShadowable), whose operands are not files.
var shOtherBuiltins = map[string]bool{":": true, "break": true, "continue": true, "times": true,
	"caller": true, "compgen": true, "complete": true, "compopt": true, "help": true, "logout": true,
	"suspend": true, "bind": true, "fc": true, "[[": true, "]]": true, "coproc": true, "select": true,
	"sleep": true, "wait": true,
	// zsh's.
	"print": true, "whence": true, "where": true, "setopt": true, "unsetopt": true, "emulate": true,
	"autoload": true, "zmodload": true, "noglob": true, "rehash": true, "zstyle": true, "bindkey": true,
	"vared": true, "functions": true, "integer": true, "float": true}
