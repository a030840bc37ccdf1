package shell

import "strings"

// sedScripts checks the sed programs of the command (-e SCRIPT, or the
// first operand): the e command and the e flag of s run commands, w FILE
// and the w flag write FILE, r/R FILE read FILE. --sandbox makes sed
// refuse e, w and r, so they need no check.
func (u *progUse) sedScripts(w []shWord) {
	var scripts []shWord
	for _, s := range u.seen {
		switch s.opt.name {
		case "--sandbox":
			return
		case "-e", "--expression":
			if s.value != nil {
				scripts = append(scripts, *s.value)
			}
		}
	}
	if !u.pattern && len(u.operands) > 0 {
		scripts = append(scripts, u.operands[0])
	}
	for _, s := range scripts {
		if !s.lit {
			u.setAsk("sed script is not a literal: " + s.text)
			continue
		}
		sp := sedParser{src: s.text}
		sp.run()
		if sp.bad != "" {
			u.setAsk(sp.bad)
		}
		for _, f := range sp.writes {
			u.writes = append(u.writes, shWord{text: f, lit: true})
		}
		for _, f := range sp.reads {
			u.reads = append(u.reads, shWord{text: f, lit: true})
		}
	}
}

// sedParser walks a sed script command by command (GNU syntax).
type sedParser struct {
	src           string
	i             int
	writes, reads []string
	bad           string
}

func (p *sedParser) run() {
	for p.i < len(p.src) && p.bad == "" {
		p.skipSpace(";\n ")
		if p.i >= len(p.src) {
			return
		}
		p.address()
		p.skipSpace(" \t")
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			p.address()
			p.skipSpace(" \t")
		}
		for p.i < len(p.src) && (p.src[p.i] == '!' || p.src[p.i] == ' ') {
			p.i++
		}
		if p.i >= len(p.src) {
			return
		}
		c := p.src[p.i]
		p.i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', ':', 'a', 'i', 'c', 'b', 't', 'T', 'q', 'Q', 'l', 'L', 'v':
			p.toEnd(c == 'b' || c == 't' || c == 'T' || c == 'q' || c == 'Q' || c == 'l' || c == 'L' || c == 'v')
		case 'r', 'R':
			p.reads = append(p.reads, p.fileName())
		case 'w', 'W':
			p.writes = append(p.writes, p.fileName())
		case 'e':
			p.bad = "sed script runs a command (e)"
		case 's':
			p.substitute()
		case 'y':
			d := p.delim()
			p.part(d)
			p.part(d)
		default:
			p.bad = "cannot read the sed script at " + string(c)
		}
	}
}

func (p *sedParser) skipSpace(set string) {
	for p.i < len(p.src) && strings.IndexByte(set, p.src[p.i]) >= 0 {
		p.i++
	}
}

// address skips one address: a number, first~step, $, /re/ or \cREc,
// each with optional I/M flags.
func (p *sedParser) address() {
	if p.i >= len(p.src) {
		return
	}
	switch c := p.src[p.i]; {
	case c >= '0' && c <= '9' || c == '$' || c == '+' || c == '~':
		for p.i < len(p.src) && strings.IndexByte("0123456789$+~", p.src[p.i]) >= 0 {
			p.i++
		}
	case c == '/':
		p.i++
		p.part('/')
	case c == '\\' && p.i+1 < len(p.src):
		d := p.src[p.i+1]
		p.i += 2
		p.part(d)
	default:
		return
	}
	for p.i < len(p.src) && (p.src[p.i] == 'I' || p.src[p.i] == 'M') {
		p.i++
	}
}

func (p *sedParser) delim() byte {
	if p.i >= len(p.src) {
		p.bad = "sed script ends inside a command"
		return 0
	}
	d := p.src[p.i]
	p.i++
	return d
}

// part skips to just after the next unescaped delimiter d.
func (p *sedParser) part(d byte) {
	for p.i < len(p.src) {
		c := p.src[p.i]
		p.i++
		if c == '\\' {
			p.i++
			continue
		}
		if c == d {
			return
		}
	}
	if p.bad == "" {
		p.bad = "sed script has an unterminated expression"
	}
}

func (p *sedParser) substitute() {
	d := p.delim()
	p.part(d)
	p.part(d)
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == 'e':
			p.bad = "sed s///e runs the pattern space as a command"
			return
		case c == 'w':
			p.i++
			p.writes = append(p.writes, p.fileName())
			return
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			p.i++
		default:
			return
		}
	}
}

// fileName reads the file name of r, R, w and W: the rest of the line.
func (p *sedParser) fileName() string {
	p.skipSpace(" \t")
	j := strings.IndexByte(p.src[p.i:], '\n')
	if j < 0 {
		j = len(p.src) - p.i
	}
	f := p.src[p.i : p.i+j]
	p.i += j
	if f == "" {
		p.bad = "sed r/w command without a file name"
	}
	return f
}

// toEnd skips a command's argument: to the end of the line, or with semi
// also to a ';' or '}' (labels, q's exit code).
func (p *sedParser) toEnd(semi bool) {
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '\n' || semi && (c == ';' || c == '}') {
			return
		}
		p.i++
	}
}
