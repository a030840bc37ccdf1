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
// ~/.bashrc.gz writes ~/.bashrc; suffixes in any case; bzip2 writes
// NAME.out for a name without one). -c, -t and -l write nothing; -S adds
// a suffix gzip tries first; with -r a directory's files are replaced: the
// tree is written. gzip -N restores a name stored in the file, which the
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
	m, stop := u.compressMode(decompress)
	if stop {
		return
	}
	decompress, keep, storedName, suffix := m.decompress, m.keep, m.storedName, m.suffix
	if suffix != nil {
		if !suffix.lit || suffix.g != nil {
			u.setAsk(u.spec.name + " -S " + shQuoteShort(suffix.text) + " names the files it writes with a suffix the policy cannot read")
			return
		}
		// gzip tries -S's suffix first, then its own.
		table = append([][2]string{{suffix.text, ""}}, table...)
	}
	if decompress && storedName && family == "gzip" {
		u.setAsk(u.spec.name + " -N writes each file under the name stored in it, which the policy cannot read")
		return
	}
	for _, op := range u.operands {
		if op.lit && op.text == "-" {
			continue // standard input to standard output
		}
		if u.recursive {
			// gzip -r DIR replaces the files under DIR, which it does not
			// name: a tree written, any member (opaque). A file operand
			// is handled as without -r below.
			u.opaque = true
		}
		if !keep || u.recursive {
			u.writes = append(u.writes, op)
		}
		if !decompress {
			u.writes = append(u.writes, wordWithSuffix(op, table[0][0]))
			continue
		}
		stems := wordStems(op, table)
		switch {
		case len(stems) > 0:
			u.writes = append(u.writes, stems...)
		case !op.lit || op.g != nil:
			u.setAsk(u.spec.name + " decompresses " + shQuoteShort(op.text) + " into a file named after it, which the policy cannot read")
			return
		default:
			// gzip -d NAME without a suffix decompresses NAME.gz (or
			// another suffix's file) into NAME; bzip2 writes NAME.out.
			// A feeder's path (find -exec gunzip {}, xargs -I % gunzip
			// %) is a name with a suffix once fed: its stems
			// (recordWrites).
			u.writes = append(u.writes, op, shWord{text: op.text + feedStem, lit: true})
			if family == "bzip2" {
				u.writes = append(u.writes, wordWithSuffix(op, ".out"))
			}
		}
	}
}

// compressMode is what a compressor's options say: the mode, -k, -N and
// -S's suffix.
type compressMode struct {
	decompress, keep, storedName bool
	suffix                       *shWord
}

// compressMode reads the options u found; stop reports one after which
// the program writes no file (-c, -t, -l, --help).
func (u *progUse) compressMode(decompress bool) (m compressMode, stop bool) {
	m.decompress = decompress
	for _, s := range u.seen {
		switch s.opt.name {
		case "-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list",
			"-h", "--help", "-L", "--license", "-V", "--version":
			return m, true
		case "-d", "--decompress", "--uncompress":
			m.decompress = true
		case "-z", "--compress":
			m.decompress = false
		case "-k", "--keep":
			m.keep = true
		case "-N", "--name":
			m.storedName = true
		case "-n", "--no-name":
			m.storedName = false
		case "-S", "--suffix":
			m.suffix = s.value
		}
	}
	return m, false
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

// wordWithoutSuffix is w without the first suffix of table it ends with,
// in any case as gzip compares them (a.GZ is a.gz), literally in its glob
// too, given that suffix's replacement; ok is false when it ends with
// none.
func wordWithoutSuffix(w shWord, table [][2]string) (shWord, bool) {
	for _, t := range table {
		suf, repl := t[0], t[1]
		n := len(suf)
		if suf == "" || len(w.text) <= n || !strings.EqualFold(w.text[len(w.text)-n:], suf) {
			continue
		}
		if w.g != nil {
			k := len([]rune(suf))
			if len(w.g) <= k || !literalTail(w.g[len(w.g)-k:], suf) {
				continue
			}
			w.g = globs.Literal(slices.Clip(w.g[:len(w.g)-k]), repl)
		}
		w.text = w.text[:len(w.text)-n] + repl
		w.alts = nil
		return w, true
	}
	return w, false
}

// wordStems is w without each suffix of table it ends with: gzip tries
// its suffixes in an order that depends on -S and the name, so every
// stem is a name it may write (gzip -dS z Makefile.gz writes Makefile).
func wordStems(w shWord, table [][2]string) []shWord {
	var out []shWord
	for _, t := range table {
		if s, ok := wordWithoutSuffix(w, [][2]string{t}); ok {
			out = append(out, s)
		}
	}
	return out
}

// literalTail reports whether the tokens spell s literally, in any case.
func literalTail(g globs.Glob, s string) bool {
	i := 0
	for _, r := range s {
		if i >= len(g) || !g[i].Lit() || g[i].Star || !strings.EqualFold(string(g[i].R), string(r)) {
			return false
		}
		i++
	}
	return i == len(g)
}
