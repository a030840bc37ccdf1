package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// kubectl and helm are not Debian packages: scripts/test-deps.sh builds
// them from the Go module proxy (the nested module scripts/helpbins, at
// the versions its go.mod pins) into helpBinDir, and their complete
// entries are checked against the help of those builds — never against a
// kubectl or helm on the PATH, whose version may differ.
var helpBinDir = filepath.Join("..", "..", "..", ".cache", "helpbins")

// cobraPrograms are the programs whose help cobraHelpTerms reads.
var cobraPrograms = []string{"kubectl", "helm"}

// cobraHelp reports whether what (a program, or a program and its verb)
// is read from a cobra program's help.
func cobraHelp(what string) bool {
	return slices.Contains(cobraPrograms, strings.Fields(what)[0])
}

// helpOptionalValue are, per program, options whose help shows a value
// although the program takes one only attached (cobra's NoOptDefVal:
// kubectl apply --dry-run alone means --dry-run=unchanged, and kubectl
// apply --dry-run server applies the file named server): the table reads
// them as optional attached values, so the next word stays an operand.
// kubectl's help does not show this (helm's does: --dry-run
// string[="client"]); scripts/helpbins lists kubectl's flags with it.
var helpOptionalValue = map[string][]string{
	"kubectl": {"--dry-run", "--validate", "--cascade"},
}

// cobraBin returns the path of a program scripts/test-deps.sh builds,
// failing the test when it is missing.
func cobraBin(t *testing.T, prog string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(helpBinDir, prog))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("%s is not built: %v (scripts/test-deps.sh builds it from scripts/helpbins into .cache/helpbins)", prog, err)
	}
	return p
}

// runCobra runs a program scripts/test-deps.sh builds and returns its
// standard output.
func runCobra(t *testing.T, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cobraBin(t, prog), args...)
	// Neither the host's kubeconfig nor its helm settings matter to the
	// help, and the defaults shown must not depend on them.
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "KUBECONFIG=/dev/null"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v", prog, strings.Join(args, " "), err)
	}
	return string(out)
}

var (
	// cobraSectionRE: a line that heads a section of the help ("Options:",
	// "Flags:", "Available Commands:", "Basic Commands (Beginner):").
	cobraSectionRE = regexp.MustCompile(`^[A-Z][^:]*:$`)
	// kubectlFlagRE: kubectl's flag lines, "    -A, --all-namespaces=false:"
	// and "    --dry-run='none':" (the value after = is the default).
	kubectlFlagRE = regexp.MustCompile(`^\s+((?:-[A-Za-z0-9], )?--[A-Za-z0-9][A-Za-z0-9_-]*)=(.*):$`)
	// helmFlagRE: pflag's flag lines, "  -o, --output format   prints…",
	// "      --debug   enable…", "      --dry-run string[="client"]   …".
	helmFlagRE = regexp.MustCompile(`^\s+((?:-[A-Za-z0-9], )?--[A-Za-z0-9][A-Za-z0-9_-]*)(?: ([A-Za-z0-9]+)(\[=[^\]]*\])?)?(?:\s{2,}|$)`)
	// cobraCommandRE: a verb in a list of commands ("  view   Display…").
	cobraCommandRE = regexp.MustCompile(`^  ([a-z][a-z0-9-]*)\s{2,}`)
)

// cobraFlagTerms turns the flag lines of one help output into a man
// page's terms, one a line: "-n, --namespace VALUE" for an option that
// takes a value, "--dry-run[=VALUE]" for an optional one, "-A,
// --all-namespaces" for a switch. Only the sections of the command's own
// flags are read (kubectl's "Options:", helm's "Flags:", or every flag
// line of kubectl options): not helm's "Global Flags:", which the
// entry's global options hold.
func cobraFlagTerms(out string, all bool) (terms []string, verbs []string) {
	section := ""
	for _, line := range strings.Split(out, "\n") {
		if cobraSectionRE.MatchString(line) {
			section = strings.TrimSuffix(line, ":")
			continue
		}
		if section == "Available Commands" {
			if m := cobraCommandRE.FindStringSubmatch(line); m != nil {
				verbs = append(verbs, m[1])
			}
			continue
		}
		if !all && section != "Options" && section != "Flags" {
			continue
		}
		if m := kubectlFlagRE.FindStringSubmatch(line); m != nil {
			switch m[2] {
			case "true", "false":
				terms = append(terms, m[1])
			default:
				terms = append(terms, m[1]+" VALUE")
			}
			continue
		}
		if m := helmFlagRE.FindStringSubmatch(line); m != nil {
			switch {
			case m[2] == "":
				terms = append(terms, m[1])
			case m[3] != "":
				terms = append(terms, m[1]+"[=VALUE]")
			default:
				terms = append(terms, m[1]+" VALUE")
			}
		}
	}
	return terms, verbs
}

// cobraHelpTerms returns the option terms of a cobra program's verb
// (cmd: "kubectl config") and of every verb under it (kubectl config
// view, set-credentials…: the table's entry for the verb lists them all),
// as a man page's terms (cobraFlagTerms).
func cobraHelpTerms(t *testing.T, cmd []string) string {
	t.Helper()
	out := runCobra(t, cmd[0], append(slices.Clone(cmd[1:]), "--help")...)
	if !strings.Contains(out, "Usage:") {
		t.Fatalf("%s --help shows no usage:\n%s", strings.Join(cmd, " "), out)
	}
	terms, verbs := cobraFlagTerms(out, false)
	for _, v := range verbs {
		if v == "help" {
			continue
		}
		terms = append(terms, cobraHelpTerms(t, append(slices.Clone(cmd), v)))
	}
	return strings.Join(terms, "\n") + "\n"
}

// cobraGlobalTerms returns a cobra program's global options: kubectl
// options, or the flags of helm --help.
func cobraGlobalTerms(t *testing.T, prog string) string {
	t.Helper()
	var terms []string
	if prog == "kubectl" {
		terms, _ = cobraFlagTerms(runCobra(t, prog, "options"), true)
	} else {
		terms, _ = cobraFlagTerms(runCobra(t, prog, "--help"), false)
	}
	return strings.Join(terms, "\n") + "\n"
}

// cobraLeftOut are the verbs of kubectl and helm the table leaves out on
// purpose, so that they ask as not understood (programs.yaml says why).
var cobraLeftOut = map[string][]string{
	// kubectl kuberc set writes the kuberc, which sets default options
	// and aliases of later kubectl commands.
	"kubectl": {"kuberc"},
	// helm plugin install and update run the plugin's hooks.
	"helm": {"plugin"},
}

// TestCobraSubcommandsKnown: every verb the built kubectl and helm list is
// in the table or left out on purpose, so a new version's verbs surface
// here (as TestGitSubcommandsKnown does for git).
func TestCobraSubcommandsKnown(t *testing.T) {
	for _, prog := range cobraPrograms {
		t.Run(prog, func(t *testing.T) {
			out := runCobra(t, prog, "--help")
			var cmds []string
			in := prog == "kubectl" // kubectl lists its verbs by group before Usage:
			for _, line := range strings.Split(out, "\n") {
				switch {
				case strings.HasPrefix(line, "Usage:"), strings.HasPrefix(line, "Flags:"):
					in = false
				case line == "Available Commands:":
					in = true
				case in:
					if m := cobraCommandRE.FindStringSubmatch(line); m != nil {
						cmds = append(cmds, m[1])
					}
				}
			}
			if len(cmds) < 20 {
				t.Fatalf("%s lists %d verbs, want more:\n%s", prog, len(cmds), out)
			}
			spec := BuiltinPrograms().byName[prog]
			for _, c := range cmds {
				if spec.subs[c] == nil && !slices.Contains(cobraLeftOut[prog], c) {
					t.Errorf("%s %s is neither in the program table nor left out on purpose", prog, c)
				}
			}
			for _, c := range cobraLeftOut[prog] {
				if spec.subs[c] != nil {
					t.Errorf("%s %s is left out on purpose but the table lists it", prog, c)
				}
			}
		})
	}
}

// TestCobraFlagTerms pins the help formats cobraFlagTerms reads.
func TestCobraFlagTerms(t *testing.T) {
	terms, verbs := cobraFlagTerms(`Options:
    -A, --all-namespaces=false:
	If present, list the requested object(s) across all namespaces.

    --dry-run='none':
	Must be "none", "server", or "client".

    -o, --output='':
	Output format.

Usage:
  kubectl get [flags]
`, false)
	want := []string{"-A, --all-namespaces", "--dry-run VALUE", "-o, --output VALUE"}
	if !slices.Equal(terms, want) || len(verbs) != 0 {
		t.Errorf("kubectl: got %q %q, want %q", terms, verbs, want)
	}
	terms, verbs = cobraFlagTerms(`Available Commands:
  add         add a chart repository
  index       generate an index file

Flags:
      --debug                           enable verbose output
      --dry-run string[="client"]       simulate an install
  -f, --values strings                  specify values in a YAML file
  -h, --help                            help for install

Global Flags:
      --kube-apiserver string           the address
`, false)
	want = []string{"--debug", "--dry-run[=VALUE]", "-f, --values VALUE", "-h, --help"}
	if !slices.Equal(terms, want) || !slices.Equal(verbs, []string{"add", "index"}) {
		t.Errorf("helm: got %q %q, want %q", terms, verbs, want)
	}
	got := parseHelpOptions(strings.Join(want, "\n"), true)
	wantOpts := []helpOption{{"--debug", ""}, {"--dry-run", "=?"}, {"-f", "="}, {"--values", "="}, {"-h", ""}, {"--help", ""}}
	if !slices.Equal(got, wantOpts) {
		t.Errorf("terms read as %v, want %v", got, wantOpts)
	}
}
