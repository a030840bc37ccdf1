package shell

import (
	"fmt"
	"slices"
	"testing"
)

// feedWrites renders the writes of src: target, "fed" for a path a feeder
// hands a command, "any" when that path can be any name.
func feedWrites(src string) []string {
	var out []string
	for _, c := range Analyze(src).Commands {
		if !c.Redirect || c.Read {
			continue
		}
		s := c.Target
		if c.Fed {
			s += " fed"
		}
		if c.FedAny {
			s += " any"
		}
		out = append(out, s)
	}
	return out
}

// feedReads renders the reads of the commands named name in src: the
// path, "any" when it is computed (ReadAny).
func feedReads(src, name string) []string {
	var out []string
	for _, c := range Analyze(src).Commands {
		if c.Name != name {
			continue
		}
		for i, r := range c.Reads {
			if i < len(c.ReadAny) && c.ReadAny[i] {
				r += " any"
			}
			out = append(out, r)
		}
	}
	return out
}

// TestFeedWrites: a write operand that is the placeholder writes what the
// feeder yields (red team B, class 1), not a file named {}.
func TestFeedWrites(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`find /etc/hosts -exec sed -i s/a/b/ {} \;`, []string{"/etc/hosts fed", "/etc/hosts/** fed any"}},
		{`find ~/.bashrc -exec tee -a {} \;`, []string{"~/.bashrc fed", "~/.bashrc/** fed any"}},
		{`find ~/.bashrc -exec sort -o {} /dev/null \;`, []string{"~/.bashrc fed", "~/.bashrc/** fed any"}},
		{`find /etc/hosts -execdir tar xf a.tar -C {} \;`, []string{"/etc/hosts fed", "/etc/hosts/** fed any"}},
		{`find . -name '*.go' -exec sed -i s/a/b/ {} +`, []string{". fed", "./**/*.go fed"}},
		{`find . -name '*.go' -o -name x -exec sed -i s/a/b/ {} +`, []string{". fed", "./** fed any"}},
		{`find . -regex '.*\.env' -exec sed -i s/a/b/ {} +`, []string{". fed", `./**/.*\.env fed any`}},
		{`ls | xargs sed -i s/a/b/`, []string{"{xargs input} fed any"}},
		{`xargs -I F cp x F.bak < list`, []string{"{xargs input}.bak fed any"}},
		{`find . -name '*.go' -print0 | xargs -0 sed -i s/a/b/`, []string{". fed", "./**/*.go fed"}},
		{`find . -name '*.go' -print | xargs sed -i s/a/b/`, []string{"{xargs input} fed any"}},
		{`find . -name '*.go' -print0 | xargs -0 -a list sed -i s/a/b/`, []string{"{xargs input} fed any"}},
		{`find . -name '*.go' -print0 | xargs -0 sed -i s/a/b/ < list`, []string{"{xargs input} fed any"}},
		{`fdfind . /etc -x sed -i s/a/b/`, []string{"/etc fed", "/etc/** fed any"}},
		{`fdfind -e go -X sed -i s/a/b/`, []string{". fed", "./**/*.go fed"}},
		{`parallel sed -i s/a/b/ ::: /etc/hosts a.txt`, []string{"/etc/hosts", "a.txt"}},
		{`sed -i s/a/b/ {}`, []string{"{}"}},
	}
	for _, tt := range tests {
		if got := feedWrites(tt.src); !slices.Equal(got, tt.want) {
			t.Errorf("%s: writes %q, want %q", tt.src, got, tt.want)
		}
	}
}

// TestFilterReads: every option that selects the files a program reads
// is a filter; one the analysis cannot read is any name (red team B,
// class 3).
func TestFilterReads(t *testing.T) {
	tests := []struct {
		src, name string
		want      []string
	}{
		{`find . -regex '.*/\.env' -exec cat {} \;`, "cat", []string{".", `./**/.*/\.env any`}},
		{`find . -lname x -exec cat {} +`, "find", []string{".", "./**/x any"}},
		{`f=.env; find . -name "$f" -exec cat {} \;`, "cat", []string{".", "./**/.env"}},
		{`grep -r --include="$(echo .env)" KEY .`, "grep", []string{".", `./**/$(echo .env) any`}},
		{`f=.env; grep -r --include="$f" KEY .`, "grep", []string{".", "./**/.env"}},
		{`rg -t go TODO`, "rg", []string{".", "./**/*.go"}},
		{`rg --type-add 'e:*.env' -te KEY`, "rg", []string{".", "./**/*.env"}},
		{`rg --type-add 'e:include:sh' -te KEY`, "rg", []string{".", "./**/e:include:sh any", "./**/e any"}},
		{`rg -t nosuchtype KEY`, "rg", []string{".", "./**/nosuchtype any"}},
		{`rg --type-add 'w:*.{html,css}' -tw x`, "rg", []string{".", "./**/*.html", "./**/*.css"}},
	}
	for _, tt := range tests {
		if got := feedReads(tt.src, tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %s reads %q, want %q", tt.src, tt.name, got, tt.want)
		}
	}
}

func ExampleAnalyze_feed() {
	for _, c := range Analyze(`find /etc/hosts -exec sed -i '$a x' {} \;`).Commands {
		fmt.Println(c.Redirect, c.Target, c.Fed)
	}
	// Output:
	// false  false
	// false  false
	// true /etc/hosts true
	// true /etc/hosts/** true
}
