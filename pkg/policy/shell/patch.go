package shell

import (
	"strconv"
	"strings"
)

// patchFile is one path a patch touches.
type PatchFile struct {
	Path string
	// tree: the patch deletes or moves the path, so a rule on dir/**
	// applies to dir itself.
	Tree bool
	// Read: the patch reads the file as well as writing it (*** Update
	// File, a diff's ---/+++, rename and copy lines: its content is
	// checked against the hunks, a moved file's content goes where the
	// agent reads it); Add File, Delete File and Move to only write.
	Read bool
}

// PatchPaths returns every path a patch touches: Codex's apply_patch
// envelope (*** Add File:, *** Update File:, *** Delete File:, *** Move
// to:) and unified or git diffs (---/+++ headers, diff --git, rename and
// copy lines). bad is a reason when the patch names no file or a header the
// policy cannot read: the call then asks, since the patch may write
// anywhere.
func PatchPaths(text string) (files []PatchFile, bad string) {
	read := true
	add := func(p string, tree bool) {
		p = strings.TrimSpace(p)
		if p == "" || p == "/dev/null" {
			return
		}
		files = append(files, PatchFile{Path: p, Tree: tree, Read: read})
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if h := strings.TrimSpace(line); strings.HasPrefix(h, "***") {
			// Codex trims a line before it reads it as a hunk header, so
			// an indented header is a header: every line that reads as
			// "***" once trimmed is judged as one, and a "***" line that
			// is no header Signoff knows is not understood (closed model).
			if !knownEnvelopeLine(h) {
				return files, "cannot read the patch line " + strconvQuote(line)
			}
			line = h
		}
		read = !strings.HasPrefix(line, "*** Add File:") && !strings.HasPrefix(line, "*** Delete File:") &&
			!strings.HasPrefix(line, "*** Move to:")
		switch {
		case strings.HasPrefix(line, "*** Add File:"):
			add(line[len("*** Add File:"):], false)
		case strings.HasPrefix(line, "*** Update File:"):
			add(line[len("*** Update File:"):], false)
		case strings.HasPrefix(line, "*** Delete File:"):
			add(line[len("*** Delete File:"):], true)
		case strings.HasPrefix(line, "*** Move to:"):
			add(line[len("*** Move to:"):], true)
			if n := len(files); n >= 2 {
				files[n-2].Tree = true // the moved file is removed
			}
		case strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ "):
			p := diffHeaderPath(line[4:])
			if p == "" && !strings.HasPrefix(strings.TrimSpace(line[4:]), "/dev/null") {
				if strings.TrimSpace(line[4:]) != "" {
					return files, "cannot read the patch header " + line
				}
				continue
			}
			add(p, false)
		case strings.HasPrefix(line, "diff --git "):
			rest := line[len("diff --git "):]
			if i := strings.Index(rest, " b/"); i >= 0 {
				add(strings.TrimPrefix(rest[:i], "a/"), false)
				add(rest[i+3:], false)
			} else {
				return files, "cannot read the patch header " + line
			}
		case strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "copy from "):
			_, p, _ := strings.Cut(line, " from ")
			add(p, strings.HasPrefix(line, "rename"))
		case strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "):
			_, p, _ := strings.Cut(line, " to ")
			add(p, false)
		case (strings.HasPrefix(line, "new file mode ") || strings.HasPrefix(line, "new mode ")) &&
			strings.HasSuffix(strings.TrimSpace(line), " 120000"):
			// git apply and GNU patch make a symbolic link of it, whose
			// target is the body: a later write through it lands where
			// it points (ln -s .claude x), which the paths do not say.
			return files, "the patch makes a symbolic link (" + strings.TrimSpace(line) + "), whose target the policy does not judge"
		case strings.HasPrefix(line, "deleted file mode"):
			if n := len(files); n > 0 {
				files[n-1].Tree = true
			}
		}
	}
	if len(files) == 0 {
		return nil, "the patch names no file the policy can find"
	}
	return files, ""
}

// envelopeLines are the "***" lines of Codex's apply_patch grammar.
var envelopeLines = []string{"*** Begin Patch", "*** End Patch", "*** End of File",
	"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"}

// knownEnvelopeLine reports whether h, a trimmed line that starts with
// "***", is one of envelopeLines (a header followed by its path, or a
// marker alone).
func knownEnvelopeLine(h string) bool {
	for _, e := range envelopeLines {
		if strings.HasSuffix(e, ":") && strings.HasPrefix(h, e) || h == e {
			return true
		}
	}
	return false
}

// strconvQuote quotes a patch line for a reason, cut to a readable length.
func strconvQuote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}

// diffHeaderPath returns the path of a ---/+++ header: the name up to a
// tab (the timestamp) with git's a/ or b/ prefix removed.
func diffHeaderPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "\"") {
		return "" // a quoted name: the caller reports it
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		s = s[2:]
	}
	return s
}
