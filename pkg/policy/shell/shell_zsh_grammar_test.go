package shell

import (
	"bufio"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// zshGrammarDiffers is what zshSameGrammar promises about src: "" when
// bash cannot parse it or both parsers build the same tree, else how
// they part.
func zshGrammarDiffers(src string) string {
	bf, err := shParse(src, syntax.LangBash)
	if err != nil {
		return ""
	}
	zf, err := shParse(src, syntax.LangZsh)
	if err != nil {
		return "zsh cannot parse it: " + err.Error()
	}
	if at, ok := zshSameShape(zshShape(nil, bf, nil), zshShape(nil, zf, nil)); !ok {
		return "the trees part at " + zshSnippet(src, at)
	}
	return ""
}

// A script zshSameGrammar accepts parses into the same tree in bash and
// zsh, so skipping the zsh parse changes no verdict. Checked on random
// scripts of the accepted bytes (biased toward words, so most parse) and
// on every corpus command it accepts; the rules it adds to the bytes are
// the ones this test found ($~x, $^x, $=x, $+x, $#x; <->, <1-5>).
func TestZshSameGrammarParsesAlike(t *testing.T) {
	var alphabet []byte
	for c := range 256 {
		if zshGrammarBytes[c] {
			alphabet = append(alphabet, byte(c))
		}
	}
	r := rand.New(rand.NewSource(1))
	n, accepted, parsed := 200_000, 0, 0
	if testing.Short() {
		n = 20_000
	}
	for range n {
		b := make([]byte, 1+r.Intn(24))
		for i := range b {
			if r.Intn(3) == 0 {
				b[i] = "abcx -"[r.Intn(6)]
			} else {
				b[i] = alphabet[r.Intn(len(alphabet))]
			}
		}
		src := string(b)
		if !zshSameGrammar(src) {
			continue
		}
		accepted++
		if _, err := shParse(src, syntax.LangBash); err == nil {
			parsed++
		}
		if why := zshGrammarDiffers(src); why != "" {
			t.Errorf("zshSameGrammar accepts %q, but %s", src, why)
		}
	}
	// Scripts of words, the reserved words of both shells among them.
	words := []string{"git", "ls", "x", "-n", "--x=y", "rm", "'q s'", `"d $q"`, "$x", "*.go", "a=b", "=rm",
		"&&", "||", "|", ";", "&", ">", ">>", "<", "2>&1", "&>", "|&", "&|", ";;", `\n`, `\x`, "<<<", "<<EOF\nx\nEOF\n",
		"~/x", "^x", "%1", ":", "$x:h", "whence", "which", "print", "builtin", "command", "exec", "-", "r", "setopt",
		"\\\n", "x\\\ny"}
	for k := range zshKeywords {
		// Whole, and split by a line continuation (red team: cop\↵roc).
		words = append(words, k, k[:1]+"\\\n"+k[1:])
	}
	for range n / 4 {
		var b strings.Builder
		for range 1 + r.Intn(6) {
			b.WriteString(words[r.Intn(len(words))])
			b.WriteString([]string{" ", " ", "", "\n"}[r.Intn(4)])
		}
		src := b.String()
		if !zshSameGrammar(src) {
			continue
		}
		accepted++
		if why := zshGrammarDiffers(src); why != "" {
			t.Errorf("zshSameGrammar accepts %q, but %s", src, why)
		}
	}
	if accepted < n/2 || parsed < n/20 {
		t.Fatalf("only %d of %d random scripts accepted, %d parsed: the test no longer exercises the rule", accepted, n, parsed)
	}
	corpus, _ := filepath.Glob("../testdata/corpus/*.txt")
	if len(corpus) == 0 {
		t.Fatal("no corpus under ../testdata/corpus")
	}
	fromCorpus := 0
	for _, path := range corpus {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			_, cmd, ok := strings.Cut(sc.Text(), "\t")
			if !ok || strings.HasPrefix(sc.Text(), "#") {
				continue
			}
			cmd = strings.NewReplacer(`\\`, `\`, `\n`, "\n").Replace(cmd)
			if !zshSameGrammar(cmd) {
				continue
			}
			fromCorpus++
			if why := zshGrammarDiffers(cmd); why != "" {
				t.Errorf("%s: zshSameGrammar accepts %q, but %s", filepath.Base(path), cmd, why)
			}
		}
		_ = f.Close()
	}
	if fromCorpus < 100 {
		t.Errorf("only %d corpus commands accepted", fromCorpus)
	}
	t.Logf("%d random scripts accepted (%d parse), %d corpus commands", accepted, parsed, fromCorpus)
}

// FuzzZshSameGrammar holds zshSameGrammar to the two parsers on any input
// (make fuzz).
func FuzzZshSameGrammar(f *testing.F) {
	for _, s := range []string{"git log --oneline -n 5 | grep fix | head -5", "cat <<EOF\n$x\nEOF", `echo "$HOME" > out && ls ~/x`, "a=b c=$d e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if !zshSameGrammar(src) {
			return
		}
		if why := zshGrammarDiffers(src); why != "" {
			t.Fatalf("zshSameGrammar accepts %q, but %s", src, why)
		}
	})
}
