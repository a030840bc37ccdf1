package shell

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// helpCommands is how TestCompleteTablesMatchHelp asks each program with a
// complete entry for its options. Every complete entry must have one.
var helpCommands = map[string][]string{
	"cat":      {"cat", "--help"},
	"basename": {"basename", "--help"},
	"dirname":  {"dirname", "--help"},
	"head":     {"head", "--help"},
	"tail":     {"tail", "--help"},
	"wc":       {"wc", "--help"},
	"gzip":     {"gzip", "--help"},
	"gunzip":   {"gunzip", "--help"},
	"bzip2":    {"bzip2", "--help"},
	"bunzip2":  {"bunzip2", "--help"},
	"ls":       {"ls", "--help"},
	"grep":     {"grep", "--help"},
	"curl":     {"curl", "--help", "all"},
	"egrep":    {"egrep", "--help"},
	"fgrep":    {"fgrep", "--help"},
	"git":      {"man:git"},
	"sort":     {"sort", "--help"},
	"uniq":     {"uniq", "--help"},
	"xxd":      {"xxd", "-h"},
	"cut":      {"cut", "--help"},
	"tr":       {"tr", "--help"},
	"diff":     {"diff", "--help"},
	"sed":      {"sed", "--help"},
	"tar":      {"tar", "--help"},
	"make":     {"make", "--help"},
	"jq":       {"manbullets:jq"},
	"awk":      {"mawk", "-W", "usage"},
	"mawk":     {"mawk", "-W", "usage"},
	// python and python3 are checked against the installed python3.
	"python":  {"python3", "--help"},
	"python3": {"python3", "--help"},
	// rg -h lists every option once, one a line; --help's long
	// descriptions start lines with other options' names.
	"rg": {"rg", "-h"},
	// fd is fdfind on Debian.
	"fd":     {"fdfind", "--help"},
	"fdfind": {"fdfind", "--help"},
	"node":   {"node", "--help"},
	"nodejs": {"node", "--help"},
	// find's help lists its expression in columns (findHelpTerms).
	"find": {"findhelp:"},
	// go's build flags are the go entry's options; each sub-command's
	// help is read below (goHelpTerms).
	"go": {"gohelp:build"},
	// kubectl and helm are built by scripts/test-deps.sh (scripts/helpbins):
	// kubectl options lists kubectl's global options, helm --help helm's;
	// each verb's help, and its verbs', is read below (cobraHelpTerms).
	"kubectl": {"cobraglobal:kubectl"},
	"helm":    {"cobraglobal:helm"},
}

// helpNumberValue are options whose help shows a value ("-j [N]") that the
// program takes from the next word only when it is a number: the table
// reads them as optional attached values, so that a target or a
// VAR=value after them stays an operand the table judges.
var helpNumberValue = map[string][]string{
	"make": {"-j", "-l"},
	// git documents --unified=<n> but parses it with PARSE_OPT_OPTARG
	// (diff.c): --unified alone is valid and never takes the next word
	// (git log --unified --output=F writes F).
	"git log":  {"--unified"},
	"git diff": {"--unified"},
	"git show": {"--unified"},
}

// helpAlwaysValue are options that always take a value where some lines
// of the help run the description into it ("-W random=number set initial
// random seed"), so the reader sees them both with and without one.
var helpAlwaysValue = map[string][]string{
	"awk":  {"-W"},
	"mawk": {"-W"},
	// "--loader, --experimental-loader=...": the value is shown once for
	// both spellings.
	"node":   {"--loader", "--debug-port", "--report-directory"},
	"nodejs": {"--loader", "--debug-port", "--report-directory"},
	// find's help lists -regextype among the positional options without
	// its TYPE.
	"find": {"-regextype"},
	// git grep's man page shows "-e" alone, its pattern on the next line.
	"git grep": {"-e"},
}

// helpNotOptions are words a program's help shows at the start of a line
// that are not options of their own: cut's "-M" is a field range (from the
// first to the Mth), diff's --GTYPE-group-format and --LTYPE-line-format
// are templates of options the table spells out (--old-group-format…).
var helpNotOptions = map[string][]string{
	"cut":  {"-M"},
	"diff": {"--GTYPE-group-format", "--LTYPE-line-format"},
	"jq":   {"-Ldirectory"}, // -L with its value attached, as the man page spells it
	// -OO is -O twice (short options cluster).
	"python":  {"-OO"},
	"python3": {"-OO"},
	// "--heap-prof." ends a sentence of another option's description.
	"node":   {"--heap-prof."},
	"nodejs": {"--heap-prof."},
}

// helpMaxIndent is, for help output whose option lines are indented less
// than their descriptions (clap's and node's long help), the most spaces
// before an option line: deeper lines are descriptions, whose examples
// start with options too.
var helpMaxIndent = map[string]int{
	"fdfind": 6,
	"node":   2,
}

// subHelpCommands is the same for complete sub-command entries: git's
// sub-commands list their options in their man pages (git log -h shows a
// few of them).
var subHelpCommands = map[string][]string{
	"git status":    {"man:git-status"},
	"git diff":      {"man:git-diff"},
	"git log":       {"man:git-log"},
	"git show":      {"man:git-show"},
	"git blame":     {"man:git-blame"},
	"git ls-files":  {"man:git-ls-files"},
	"git rev-parse": {"man:git-rev-parse"},
	"git commit":    {"man:git-commit"},
	"git grep":      {"man:git-grep"},
	// go: each sub-command's help (and the build flags where it takes
	// them, the test flags for go test, every verb's for go mod and go
	// work). go help takes no options.
	"go build":    {"gohelp:build"},
	"go install":  {"gohelp:install,build"},
	"go run":      {"gohelp:run,build"},
	"go get":      {"gohelp:get,build"},
	"go clean":    {"gohelp:clean,build"},
	"go generate": {"gohelp:generate,build"},
	"go fmt":      {"gohelp:fmt"},
	"go fix":      {"gohelp:fix,build"},
	"go vet":      {"gohelp:vet,build"},
	"go test":     {"gohelp:test,testflag,build"},
	"go list":     {"gohelp:list,build"},
	"go doc":      {"gohelp:doc"},
	"go env":      {"gohelp:env"},
	"go version":  {"gohelp:version"},
	"go mod":      {"gohelp:mod download,mod edit,mod graph,mod init,mod tidy,mod vendor,mod verify,mod why"},
	"go work":     {"gohelp:work edit,work init,work sync,work use,work vendor"},
	"go help":     {"nooptions:"},
	// kubectl and helm: each verb's --help, and its own verbs' (kubectl
	// config view, helm repo add), read by cobraHelpTerms; help takes none.
	"kubectl alpha":         {"nooptions:"}, // no alpha verbs in this version
	"kubectl annotate":      {"cobrahelp:kubectl annotate"},
	"kubectl api-resources": {"cobrahelp:kubectl api-resources"},
	"kubectl api-versions":  {"cobrahelp:kubectl api-versions"},
	"kubectl apply":         {"cobrahelp:kubectl apply"},
	"kubectl attach":        {"cobrahelp:kubectl attach"},
	"kubectl auth":          {"cobrahelp:kubectl auth"},
	"kubectl autoscale":     {"cobrahelp:kubectl autoscale"},
	"kubectl certificate":   {"cobrahelp:kubectl certificate"},
	"kubectl cluster-info":  {"cobrahelp:kubectl cluster-info"},
	"kubectl completion":    {"cobrahelp:kubectl completion"},
	"kubectl config":        {"cobrahelp:kubectl config"},
	"kubectl cordon":        {"cobrahelp:kubectl cordon"},
	"kubectl cp":            {"cobrahelp:kubectl cp"},
	"kubectl create":        {"cobrahelp:kubectl create"},
	"kubectl debug":         {"cobrahelp:kubectl debug"},
	"kubectl delete":        {"cobrahelp:kubectl delete"},
	"kubectl describe":      {"cobrahelp:kubectl describe"},
	"kubectl diff":          {"cobrahelp:kubectl diff"},
	"kubectl drain":         {"cobrahelp:kubectl drain"},
	"kubectl edit":          {"cobrahelp:kubectl edit"},
	"kubectl events":        {"cobrahelp:kubectl events"},
	"kubectl exec":          {"cobrahelp:kubectl exec"},
	"kubectl explain":       {"cobrahelp:kubectl explain"},
	"kubectl expose":        {"cobrahelp:kubectl expose"},
	"kubectl get":           {"cobrahelp:kubectl get"},
	"kubectl kustomize":     {"cobrahelp:kubectl kustomize"},
	"kubectl label":         {"cobrahelp:kubectl label"},
	"kubectl logs":          {"cobrahelp:kubectl logs"},
	"kubectl options":       {"nooptions:"}, // kubectl options --help lists the global options
	"kubectl patch":         {"cobrahelp:kubectl patch"},
	"kubectl plugin":        {"cobrahelp:kubectl plugin"},
	"kubectl port-forward":  {"cobrahelp:kubectl port-forward"},
	"kubectl proxy":         {"cobrahelp:kubectl proxy"},
	"kubectl replace":       {"cobrahelp:kubectl replace"},
	"kubectl rollout":       {"cobrahelp:kubectl rollout"},
	"kubectl run":           {"cobrahelp:kubectl run"},
	"kubectl scale":         {"cobrahelp:kubectl scale"},
	"kubectl set":           {"cobrahelp:kubectl set"},
	"kubectl taint":         {"cobrahelp:kubectl taint"},
	"kubectl top":           {"cobrahelp:kubectl top"},
	"kubectl uncordon":      {"cobrahelp:kubectl uncordon"},
	"kubectl version":       {"cobrahelp:kubectl version"},
	"kubectl wait":          {"cobrahelp:kubectl wait"},
	"kubectl help":          {"nooptions:"},
	"helm completion":       {"cobrahelp:helm completion"},
	"helm create":           {"cobrahelp:helm create"},
	"helm dependency":       {"cobrahelp:helm dependency"},
	"helm env":              {"cobrahelp:helm env"},
	"helm get":              {"cobrahelp:helm get"},
	"helm help":             {"nooptions:"},
	"helm history":          {"cobrahelp:helm history"},
	"helm install":          {"cobrahelp:helm install"},
	"helm lint":             {"cobrahelp:helm lint"},
	"helm list":             {"cobrahelp:helm list"},
	"helm package":          {"cobrahelp:helm package"},
	"helm pull":             {"cobrahelp:helm pull"},
	"helm push":             {"cobrahelp:helm push"},
	"helm registry":         {"cobrahelp:helm registry"},
	"helm repo":             {"cobrahelp:helm repo"},
	"helm rollback":         {"cobrahelp:helm rollback"},
	"helm search":           {"cobrahelp:helm search"},
	"helm show":             {"cobrahelp:helm show"},
	"helm status":           {"cobrahelp:helm status"},
	"helm template":         {"cobrahelp:helm template"},
	"helm test":             {"cobrahelp:helm test"},
	"helm uninstall":        {"cobrahelp:helm uninstall"},
	"helm upgrade":          {"cobrahelp:helm upgrade"},
	"helm verify":           {"cobrahelp:helm verify"},
	"helm version":          {"cobrahelp:helm version"},
}

// helpOption is one option a program's help lists: its name and whether
// it takes a value ("" none, "=" required, "=?" optional).
type helpOption struct {
	name, value string
}

var (
	helpItemRE = regexp.MustCompile(`^(--?[A-Za-z0-9#@?:][A-Za-z0-9_.-]*)(\[=|=| <| \[|<|\[|)(.?)`)
	helpNegRE  = regexp.MustCompile(`--\[no-\]`)
	// helpSpellingsRE finds a second spelling after a space, not a comma.
	helpSpellingsRE = regexp.MustCompile(`([^,]) --`)
	// helpValueWordRE: one word after an option and a single space is its
	// value ("-e script", "--label LABEL", "--arg name value").
	helpValueWordRE = regexp.MustCompile(`^ [A-Za-z][A-Za-z_=|:-]*( [A-Za-z][A-Za-z_=|:-]*)?$`)
)

// parseHelpOptions reads the option column of --help output (coreutils,
// curl and git style): lines that start with '-' after indentation, items
// separated by ", ", a value shown as =VALUE, [=VALUE], <value> or
// [value]. A short option shares its long form's required value
// ("-c, --bytes=NUM").
//
// In a man page's terms (man is true) nothing but values follows an
// option, so a word after a space is a value ("-L :<funcname>").
func parseHelpOptions(out string, man bool) []helpOption {
	var opts []helpOption
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(t, "-") {
			continue
		}
		if i := strings.Index(t, " : "); i >= 0 {
			t = t[:i] // python's "-c cmd : program passed in as string"
		}
		if i := strings.Index(t, "  "); i >= 0 {
			t = t[:i]
		}
		if i := strings.IndexByte(t, '\t'); i >= 0 {
			t = t[:i]
		}
		if man {
			t = helpSpellingsRE.ReplaceAllString(t, "$1, --") // "-1 --base": two spellings
		}
		t = strings.ReplaceAll(t, "...", "") // clap's "--unrestricted...": repeatable
		neg := helpNegRE.MatchString(t)
		t = helpNegRE.ReplaceAllString(t, "--")
		var line []helpOption
		longValue := ""
		for _, item := range strings.Split(t, ", ") {
			m := helpItemRE.FindStringSubmatch(item)
			if m == nil {
				continue // "-<number>": a placeholder, not an option
			}
			v := ""
			switch m[2] {
			case "=", " <", " [":
				v = "="
			case "[=", "[":
				v = "=?"
			case "<":
				v = "=a" // -U<n>: attached; the table may read it either way
			case "":
				switch {
				case m[3] == " " && (man || helpValueWordRE.MatchString(item[len(m[1]):])):
					v = "=" // "-e script", "--label LABEL", "-C NUM"
				case m[3] != "" && m[3] != " ":
					v = "=a" // -L:<funcname>:<file>
				}
			}
			// "-p, --indicator-style=slash": -p is the long option with
			// that value, not an option taking one.
			fixed := m[2] == "=" && m[3] >= "a" && m[3] <= "z"
			if strings.HasPrefix(m[1], "--") && !fixed {
				longValue = v
			}
			line = append(line, helpOption{m[1], v})
			if neg && strings.HasPrefix(m[1], "--") {
				line = append(line, helpOption{"--no-" + m[1][2:], ""})
			}
		}
		for i := range line {
			if !strings.HasPrefix(line[i].name, "--") && line[i].value == "" && longValue == "=" {
				line[i].value = "="
			}
		}
		opts = append(opts, line...)
	}
	return opts
}

// roffTermRE and roffEscapes read the option terms of a man page: the
// line after each .PP that starts with a dash.
var roffEscapes = strings.NewReplacer(`\-`, "-", `\&`, "", `\fB`, "", `\fR`, "", `\fI`, "", `\(aq`, "'", `\*(Aq`, "'")

// manTerms returns the option lines of a man page, as help output would
// show them (one per line, two spaces before nothing).
func manTerms(t *testing.T, page string) string {
	t.Helper()
	lines := strings.Split(manSource(t, page), "\n")
	var b strings.Builder
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], ".PP") {
			continue
		}
		if term := roffEscapes.Replace(lines[i+1]); strings.HasPrefix(term, "-") {
			b.WriteString(term + "\n")
		}
	}
	return b.String()
}

// manBulletTerms returns the option terms of a man page that lists them
// as bullets (jq's: `.IP "\[ci]"` then "\fB--slurp\fR/\fB-s\fR:"), as
// help output would show them: spellings separated by ", ".
func manBulletTerms(t *testing.T, page string) string {
	t.Helper()
	src := manSource(t, page)
	lines := strings.Split(src, "\n")
	var b strings.Builder
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], ".IP \"\\[ci]\"") {
			continue
		}
		term := strings.TrimSuffix(roffEscapes.Replace(strings.ReplaceAll(lines[i+1], `\.`, ".")), ":")
		if !strings.HasPrefix(term, "-") {
			continue
		}
		for _, sep := range []string{" / ", "/", " and "} {
			term = strings.ReplaceAll(term, sep, ", ")
		}
		b.WriteString(term + "\n")
	}
	return b.String()
}

// manSource returns the roff text of a section 1 man page.
func manSource(t *testing.T, page string) string {
	t.Helper()
	path := "/usr/share/man/man1/" + page + ".1.gz"
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("man page %s: %v (scripts/test-deps.sh installs it)", page, err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("man page %s: %v", page, err)
	}
	src, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("man page %s: %v", page, err)
	}
	return string(src)
}

// helpOf returns the option list a help command shows: its output, or a
// man page's option terms for "man:PAGE" ("manbullets:PAGE" for a page
// that lists them as bullets).
func helpOf(t *testing.T, argv []string) string {
	t.Helper()
	if page, ok := strings.CutPrefix(argv[0], "man:"); ok {
		return manTerms(t, page)
	}
	if page, ok := strings.CutPrefix(argv[0], "manbullets:"); ok {
		return manBulletTerms(t, page)
	}
	if argv[0] == "findhelp:" {
		return findHelpTerms(runHelp(t, []string{"find", "--help"}))
	}
	if topics, ok := strings.CutPrefix(argv[0], "gohelp:"); ok {
		return goHelpTerms(t, strings.Split(topics, ","))
	}
	if cmd, ok := strings.CutPrefix(argv[0], "cobrahelp:"); ok {
		return cobraHelpTerms(t, strings.Fields(cmd))
	}
	if prog, ok := strings.CutPrefix(argv[0], "cobraglobal:"); ok {
		return cobraGlobalTerms(t, prog)
	}
	out := runHelp(t, argv)
	if n, ok := helpMaxIndent[argv[0]]; ok {
		out = shallowLines(out, n)
	}
	return out
}

// runHelp runs a help command and returns its output.
func runHelp(t *testing.T, argv []string) string {
	t.Helper()
	if _, err := exec.LookPath(argv[0]); err != nil {
		t.Fatalf("%s is not installed (scripts/test-deps.sh installs it): %v", argv[0], err)
	}
	out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput() // git -h exits 129
	return string(out)
}

func isMan(argv []string) bool {
	return strings.HasPrefix(argv[0], "man:") || argv[0] == "findhelp:" || strings.HasPrefix(argv[0], "gohelp:") ||
		strings.HasPrefix(argv[0], "cobra")
}

// checkAgainstHelp fails on every option of the help that the entry (or
// its program's entry, for a sub-command) does not list, or lists with
// another value shape.
func checkAgainstHelp(t *testing.T, what string, spec, parent *progSpec, help string, man bool) {
	t.Helper()
	opts := parseHelpOptions(help, man)
	// A cobra program's sub-command may have no option of its own
	// (kubectl api-versions): its reader checks that the help was read.
	if len(opts) < 3 && !cobraHelp(what) {
		t.Fatalf("%s: read %d options from its help, want more:\n%s", what, len(opts), help)
	}
	// An option shown both with and without a value takes an optional one
	// (git log --expand-tabs=<n>, --expand-tabs).
	shapes := map[string]map[string]bool{}
	for _, h := range opts {
		if shapes[h.name] == nil {
			shapes[h.name] = map[string]bool{}
		}
		shapes[h.name][h.value] = true
	}
	for _, h := range opts {
		if sh := shapes[h.name]; sh["="] && (sh[""] || sh["=?"]) {
			h.value = "=?"
		}
		if slices.Contains(helpAlwaysValue[what], h.name) {
			h.value = "="
		}
		if slices.Contains(helpNotOptions[what], h.name) {
			continue
		}
		name := h.name
		if name == "-NUM" {
			name = "-1" // grep -NUM: the digits are options
		}
		o := spec.options[name]
		if o == nil {
			o = spec.global[name]
		}
		if o == nil && parent != nil {
			o = parent.options[name]
		}
		if o == nil && parent != nil && !parent.globalFirst {
			// kubectl's and helm's global options come after the verb
			// too (helm install -h).
			o = parent.global[name]
		}
		if o == nil {
			t.Errorf("%s: option %s%s is in its help, not in the table", what, h.name, h.value)
			continue
		}
		switch {
		case h.value == "=a":
		case slices.Contains(helpNumberValue[what], h.name) && o.value == valOptional:
		case slices.Contains(helpOptionalValue[strings.Fields(what)[0]], h.name) && o.value == valOptional:
		case h.value == "=" && o.value != valRequired:
			t.Errorf("%s: option %s takes a value, the table reads it without one", what, h.name)
		case h.value != "=" && o.value == valRequired:
			t.Errorf("%s: option %s takes no separate value, the table reads the next word as one", what, h.name)
		}
	}
}

// TestCompleteTablesMatchHelp runs every program whose entry is complete
// and reads its own help: an option the help lists that the entry does not
// (a new version's option, a forgotten one), or that the entry reads with
// a different value shape (a value taken or not), fails the test. The
// programs are the system's (scripts/test-deps.sh installs them); a
// missing one fails.
func TestCompleteTablesMatchHelp(t *testing.T) {
	tbl := BuiltinPrograms()
	var names []string
	for n, s := range tbl.byName {
		if s.complete {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no complete entry in the program table")
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			argv, ok := helpCommands[n]
			if !ok {
				t.Fatalf("complete entry %s has no help command in helpCommands", n)
			}
			spec := tbl.byName[n]
			checkAgainstHelp(t, n, spec, nil, helpOf(t, argv), isMan(argv))
			for sn, sub := range spec.subs {
				if !sub.complete {
					continue
				}
				argv, ok := subHelpCommands[n+" "+sn]
				if !ok {
					t.Errorf("complete entry %s %s has no help command in subHelpCommands", n, sn)
					continue
				}
				if argv[0] == "nooptions:" {
					if len(sub.options) > 0 {
						t.Errorf("%s %s takes no options, the table lists %d", n, sn, len(sub.options))
					}
					continue
				}
				checkAgainstHelp(t, n+" "+sn, sub, spec, helpOf(t, argv), isMan(argv))
			}
		})
	}
}

// gitLeftOut are git's sub-commands the table leaves out on purpose, so
// that they ask as not understood (programs.yaml says why).
var gitLeftOut = []string{"credential", "credential-cache", "credential-store", "remote-ext", "remote-fd",
	"shell", "daemon", "http-backend", "instaweb", "upload-pack", "receive-pack", "upload-archive", "hook",
	"bugreport", "diagnose", "imap-send", "help", "fetch-pack", "send-pack", "fast-import",
	"merge-index", "merge-one-file", "mailsplit", "mailinfo", "quiltimport", "for-each-repo", "maintenance",
	"remote-http", "remote-https", "remote-ftp", "remote-ftps",
	// replace makes any name stand for any object (git replace -f HEAD
	// BLOB, then git show -s HEAD prints the blob).
	"replace",
	// mktree builds trees from its input's entries, a symbolic link to
	// any file too, which a checkout then makes (red team N, N4).
	"mktree"}

// TestGitSubcommandsKnown: every sub-command the installed git has is in
// the table or left out on purpose, so a new version's sub-commands
// surface here.
func TestGitSubcommandsKnown(t *testing.T) {
	out, err := exec.Command("git", "--list-cmds=main,nohelpers").Output()
	if err != nil {
		t.Fatalf("git --list-cmds: %v (scripts/test-deps.sh installs git)", err)
	}
	git := BuiltinPrograms().byName["git"]
	cmds := strings.Fields(string(out))
	if len(cmds) < 100 {
		t.Fatalf("git lists %d sub-commands, want more", len(cmds))
	}
	for _, c := range cmds {
		if git.subs[c] == nil && !slices.Contains(gitLeftOut, c) {
			t.Errorf("git %s is neither in the program table nor left out on purpose", c)
		}
	}
	for _, c := range gitLeftOut {
		if git.subs[c] != nil {
			t.Errorf("git %s is left out on purpose but the table lists it", c)
		}
	}
}

// TestParseHelpOptions pins the help formats the test above reads.
func TestParseHelpOptions(t *testing.T) {
	got := parseHelpOptions(`Usage: x
  -c, --bytes=[-]NUM       print the first NUM bytes
  -F, --classify[=WHEN]    append indicator
  -p, --indicator-style=slash  append / indicator to directories
      --help        display this help
 -d, --data <data>          HTTP POST data
     --anyauth              Pick any authentication method
    -u, --[no-]untracked-files[=<mode>]
 -x, --proxy [protocol://]host[:port] Use this proxy
`, false)
	want := []helpOption{{"-c", "="}, {"--bytes", "="}, {"-F", ""}, {"--classify", "=?"}, {"-p", ""}, {"--indicator-style", "="}, {"--help", ""},
		{"-d", "="}, {"--data", "="}, {"--anyauth", ""}, {"-u", ""}, {"--untracked-files", "=?"},
		{"--no-untracked-files", ""}, {"-x", "="}, {"--proxy", "="}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("option %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// gitHelpValueShown are options whose git SUB -h shows no value although
// they take one ("--chmod (+|-)x", a hidden --resolvemsg), and git
// config's getters, whose values its hook reads.
var gitHelpValueShown = map[string][]string{
	"add":          {"--chmod"},
	"update-index": {"--chmod"},
	"am":           {"--resolvemsg"},
	"config":       {"--get-urlmatch", "--get-color", "--get-colorbool"},
}

// TestGitSubcommandValuesMatchHelp: git's sub-command entries that are
// not complete still list options (their options are closed: git's entry
// is complete), and an option the table reads with a required value takes
// the next word — a path, for the sub-commands whose operands are read or
// written. Each such option must take a required value by git SUB -h too,
// so that the table never swallows an operand git reads.
func TestGitSubcommandValuesMatchHelp(t *testing.T) {
	git := BuiltinPrograms().byName["git"]
	for name, sub := range git.subs {
		if sub.complete || len(sub.options) == 0 {
			continue
		}
		for _, h := range parseHelpOptions(helpOf(t, []string{"git", name, "-h"}), false) {
			o := sub.options[h.name]
			if o == nil || o.value != valRequired || h.value == "=" || h.value == "=a" ||
				slices.Contains(gitHelpValueShown[name], h.name) {
				continue
			}
			t.Errorf("git %s %s: the table reads the next word as its value, git %s -h shows %q", name, h.name, name, h.value)
		}
	}
}
