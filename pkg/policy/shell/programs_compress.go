package shell

import (
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// compressSuffixes are the suffixes each compressor removes when it
// decompresses a file, and the name it gives the result (gzip -d a.tgz
// writes a.tar); the first is the one it adds when it compresses.
var compressSuffixes = map[string][][2]string{
	"gzip":  {{".gz", ""}, {"-gz", ""}, {".z", ""}, {"-z", ""}, {"_z", ""}, {".Z", ""}, {".tgz", ".tar"}, {".taz", ".tar"}},
	"bzip2": {{".bz2", ""}, {".bz", ""}, {".tbz2", ".tar"}, {".tbz", ".tar"}},
}

// decompressors are the compressors' names that decompress by default,
// and the compressor each is.
var decompressors = map[string]string{"gunzip": "gzip", "bunzip2": "bzip2"}

// compressNames records the files a compressor writes (hook compress):
// each file operand is replaced — removed unless -k, so written — by the
// file with the suffix added (gzip FILE writes FILE.gz) or, decompressing
// (-d, or the program run as gunzip, bunzip2), removed (gzip -d
// ~/.bashrc.gz writes ~/.bashrc). -c, -t and -l write nothing; -S gives
// gzip's suffix; gzip -N restores a name stored in the file, which the
// policy cannot read: it asks. A name the policy cannot read (gzip -d "$f")
// asks when decompressing, since what it writes is that name's stem.
func (u *progUse) compressNames() {
	family, decompress := u.spec.name, false
	if f, ok := decompressors[family]; ok {
		family, decompress = f, true
	}
	table := compressSuffixes[family]
	if table == nil {
		// A policy's own entry with hook compress: its suffix is unknown.
		u.setAsk(u.spec.name + " writes files named after its operands with a suffix the policy does not know")
		return
	}
	keep, storedName := false, false
	var suffix *shWord
	for _, s := range u.seen {
		switch s.opt.name {
		case "-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list",
			"-h", "--help", "-L", "--license", "-V", "--version":
			return
		case "-d", "--decompress", "--uncompress":
			decompress = true
		case "-z", "--compress":
			decompress = false
		case "-k", "--keep":
			keep = true
		case "-N", "--name":
			storedName = true
		case "-n", "--no-name":
			storedName = false
		case "-S", "--suffix":
			suffix = s.value
		}
	}
	if suffix != nil {
		if !suffix.lit || suffix.g != nil {
			u.setAsk(u.spec.name + " -S " + shQuoteShort(suffix.text) + " names the files it writes with a suffix the policy cannot read")
			return
		}
		table = [][2]string{{suffix.text, ""}}
	}
	if decompress && storedName && family == "gzip" {
		u.setAsk(u.spec.name + " -N writes each file under the name stored in it, which the policy cannot read")
		return
	}
	for _, op := range u.operands {
		if op.lit && op.text == "-" {
			continue // standard input to standard output
		}
		if !keep {
			u.writes = append(u.writes, op)
		}
		if !decompress {
			u.writes = append(u.writes, wordWithSuffix(op, table[0][0]))
			continue
		}
		if u.recursive && !op.glob && op.g == nil {
			continue // a directory: its members, written as a tree (opaque)
		}
		w, ok := wordWithoutSuffix(op, table)
		if !ok && (!op.lit || op.g != nil) {
			u.setAsk(u.spec.name + " decompresses " + shQuoteShort(op.text) + " into a file named after it, which the policy cannot read")
			return
		}
		if ok {
			u.writes = append(u.writes, w)
		}
	}
}

// wordWithSuffix is w with s appended, literally, to its text and glob.
func wordWithSuffix(w shWord, s string) shWord {
	w.text += s
	if w.g != nil {
		w.g = globs.Literal(slices.Clip(w.g), s)
	}
	w.alts = nil
	return w
}

// wordWithoutSuffix is w without the first suffix of table it ends with
// (literally, in its glob too), given that suffix's replacement; ok is
// false when it ends with none.
func wordWithoutSuffix(w shWord, table [][2]string) (shWord, bool) {
	for _, t := range table {
		suf, repl := t[0], t[1]
		if suf == "" || !strings.HasSuffix(w.text, suf) || len(w.text) == len(suf) {
			continue
		}
		if w.g != nil {
			n := len([]rune(suf))
			if len(w.g) <= n || !literalTail(w.g[len(w.g)-n:], suf) {
				continue
			}
			w.g = globs.Literal(slices.Clip(w.g[:len(w.g)-n]), repl)
		}
		w.text = strings.TrimSuffix(w.text, suf) + repl
		w.alts = nil
		return w, true
	}
	return w, false
}

// literalTail reports whether the tokens spell s literally.
func literalTail(g globs.Glob, s string) bool {
	i := 0
	for _, r := range s {
		if i >= len(g) || !g[i].Lit() || g[i].Star || g[i].R != r {
			return false
		}
		i++
	}
	return i == len(g)
}
