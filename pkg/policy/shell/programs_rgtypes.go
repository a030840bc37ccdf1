// rgTypeList is copied from `rg --type-list` (ripgrep 13.0.0).

package shell

import (
	"maps"
	"slices"
)

// rgTypeList is ripgrep 13's built-in file types and their globs, one
// "name: glob, glob" line each: the record rgTypeUnion is held to
// (TestRgTypeGlobsAreTheUnionOfRipgrepVersions reads it), with the rg on
// PATH.
const rgTypeList = `
agda: *.agda, *.lagda
aidl: *.aidl
amake: *.bp, *.mk
asciidoc: *.adoc, *.asc, *.asciidoc
asm: *.S, *.asm, *.s
asp: *.ascx, *.ascx.cs, *.ascx.vb, *.aspx, *.aspx.cs, *.aspx.vb
ats: *.ats, *.dats, *.hats, *.sats
avro: *.avdl, *.avpr, *.avsc
awk: *.awk
bazel: *.BUILD, *.bazel, *.bazelrc, *.bzl, BUILD, WORKSPACE
bitbake: *.bb, *.bbappend, *.bbclass, *.conf, *.inc
brotli: *.br
buildstream: *.bst
bzip2: *.bz2, *.tbz2
c: *.[chH], *.[chH].in, *.cats
cabal: *.cabal
cbor: *.cbor
ceylon: *.ceylon
clojure: *.clj, *.cljc, *.cljs, *.cljx
cmake: *.cmake, CMakeLists.txt
coffeescript: *.coffee
config: *.cfg, *.conf, *.config, *.ini
coq: *.v
cpp: *.[ChH], *.[ChH].in, *.[ch]pp, *.[ch]pp.in, *.[ch]xx, *.[ch]xx.in, *.cc, *.cc.in, *.hh, *.hh.in, *.inl
creole: *.creole
crystal: *.cr, Projectfile
cs: *.cs
csharp: *.cs
cshtml: *.cshtml
css: *.css, *.scss
csv: *.csv
cython: *.pxd, *.pxi, *.pyx
d: *.d
dart: *.dart
dhall: *.dhall
diff: *.diff, *.patch
docker: *Dockerfile*
dvc: *.dvc, Dvcfile
ebuild: *.ebuild
edn: *.edn
elisp: *.el
elixir: *.eex, *.ex, *.exs
elm: *.elm
erb: *.erb
erlang: *.erl, *.hrl
fidl: *.fidl
fish: *.fish
flatbuffers: *.fbs
fortran: *.F, *.F77, *.F90, *.F95, *.f, *.f77, *.f90, *.f95, *.pfo
fsharp: *.fs, *.fsi, *.fsx
fut: .fut
gap: *.g, *.gap, *.gd, *.gi, *.tst
gn: *.gn, *.gni
go: *.go
gradle: *.gradle
groovy: *.gradle, *.groovy
gzip: *.gz, *.tgz
h: *.h, *.hpp
haml: *.haml
haskell: *.c2hs, *.cpphs, *.hs, *.hsc, *.lhs
hbs: *.hbs
hs: *.hs, *.lhs
html: *.ejs, *.htm, *.html
idris: *.idr, *.lidr
java: *.java, *.jsp, *.jspx, *.properties
jinja: *.j2, *.jinja, *.jinja2
jl: *.jl
js: *.js, *.jsx, *.vue
json: *.json, composer.lock
jsonl: *.jsonl
julia: *.jl
jupyter: *.ipynb, *.jpynb
k: *.k
kotlin: *.kt, *.kts
less: *.less
license: *[.-]LICEN[CS]E*, AGPL-*[0-9]*, APACHE-*[0-9]*, BSD-*[0-9]*, CC-BY-*, COPYING, COPYING[.-]*, COPYRIGHT, COPYRIGHT[.-]*, EULA, EULA[.-]*, GFDL-*[0-9]*, GNU-*[0-9]*, GPL-*[0-9]*, LGPL-*[0-9]*, LICEN[CS]E, LICEN[CS]E[.-]*, MIT-*[0-9]*, MPL-*[0-9]*, NOTICE, NOTICE[.-]*, OFL-*[0-9]*, PATENTS, PATENTS[.-]*, UNLICEN[CS]E, UNLICEN[CS]E[.-]*, agpl[.-]*, gpl[.-]*, lgpl[.-]*, licen[cs]e, licen[cs]e.*
lisp: *.el, *.jl, *.lisp, *.lsp, *.sc, *.scm
lock: *.lock, package-lock.json
log: *.log
lua: *.lua
lz4: *.lz4
lzma: *.lzma
m4: *.ac, *.m4
make: *.mak, *.mk, [Gg][Nn][Uu]makefile, [Gg][Nn][Uu]makefile.am, [Gg][Nn][Uu]makefile.in, [Mm]akefile, [Mm]akefile.am, [Mm]akefile.in
mako: *.mako, *.mao
man: *.[0-9][cEFMmpSx], *.[0-9lnpx]
markdown: *.markdown, *.md, *.mdown, *.mkdn
matlab: *.m
md: *.markdown, *.md, *.mdown, *.mkdn
meson: meson.build, meson_options.txt
minified: *.min.css, *.min.html, *.min.js
mint: *.mint
mk: mkfile
ml: *.ml
msbuild: *.csproj, *.fsproj, *.proj, *.props, *.targets, *.vcxproj
nim: *.nim, *.nimble, *.nimf, *.nims
nix: *.nix
objc: *.h, *.m
objcpp: *.h, *.mm
ocaml: *.ml, *.mli, *.mll, *.mly
org: *.org, *.org_archive
pascal: *.dpr, *.inc, *.lpr, *.pas, *.pp
pdf: *.pdf
perl: *.PL, *.perl, *.pl, *.plh, *.plx, *.pm, *.t
php: *.php, *.php3, *.php4, *.php5, *.phtml
po: *.po
pod: *.pod
postscript: *.eps, *.ps
protobuf: *.proto
ps: *.cdxml, *.ps1, *.ps1xml, *.psd1, *.psm1
puppet: *.erb, *.pp, *.rb
purs: *.purs
py: *.py
qmake: *.prf, *.pri, *.pro
qml: *.qml
r: *.R, *.Rmd, *.Rnw, *.r
racket: *.rkt
rdoc: *.rdoc
readme: *README, README*
red: *.r, *.red, *.reds
robot: *.robot
rst: *.rst
ruby: *.gemspec, *.rb, *.rbw, .irbrc, Gemfile, Rakefile, config.ru
rust: *.rs
sass: *.sass, *.scss
scala: *.sbt, *.scala
sh: *.bash, *.bashrc, *.csh, *.cshrc, *.ksh, *.kshrc, *.sh, *.tcsh, *.zsh, .bash_login, .bash_logout, .bash_profile, .bashrc, .cshrc, .kshrc, .login, .logout, .profile, .tcshrc, .zlogin, .zlogout, .zprofile, .zshenv, .zshrc, bash_login, bash_logout, bash_profile, bashrc, profile, zlogin, zlogout, zprofile, zshenv, zshrc
slim: *.skim, *.slim, *.slime
smarty: *.tpl
sml: *.sig, *.sml
soy: *.soy
spark: *.spark
spec: *.spec
sql: *.psql, *.sql
stylus: *.styl
sv: *.h, *.sv, *.svh, *.v, *.vg
svg: *.svg
swift: *.swift
swig: *.def, *.i
systemd: *.automount, *.conf, *.device, *.link, *.mount, *.path, *.scope, *.service, *.slice, *.socket, *.swap, *.target, *.timer
taskpaper: *.taskpaper
tcl: *.tcl
tex: *.bib, *.cls, *.dtx, *.ins, *.ltx, *.sty, *.tex
textile: *.textile
tf: *.tf
thrift: *.thrift
toml: *.toml, Cargo.lock
ts: *.ts, *.tsx
twig: *.twig
txt: *.txt
typoscript: *.ts, *.typoscript
vala: *.vala
vb: *.vb
vcl: *.vcl
verilog: *.sv, *.svh, *.v, *.vh
vhdl: *.vhd, *.vhdl
vim: *.vim
vimscript: *.vim
webidl: *.idl, *.webidl, *.widl
wiki: *.mediawiki, *.wiki
xml: *.dtd, *.rng, *.sch, *.xhtml, *.xjb, *.xml, *.xml.dist, *.xsd, *.xsl, *.xslt
xz: *.txz, *.xz
yacc: *.y
yaml: *.yaml, *.yml
yang: *.yang
z: *.Z
zig: *.zig
zsh: *.zsh, .zlogin, .zlogout, .zprofile, .zshenv, .zshrc, zlogin, zlogout, zprofile, zshenv, zshrc
zstd: *.zst, *.zstd
`

// rgTypeUnion are the globs of ripgrep's built-in file types (its
// default_types.rs) that agents commonly pass to rg -t and as Grep's type. The host's
// ripgrep may be of any version, so each type lists the union of the
// globs ripgrep 13 and 14 give it (14 added .env to sh, *.pyi to py…): a
// type filter is a read of every file either version's type matches
// (TestRgTypeGlobsAreTheUnionOfRipgrepVersions holds it to the shell
// analysis' ripgrep 13 table and to the rg on PATH). A type not listed
// asks: rg's types name files by more than their extension (sh includes
// .env and .bashrc).
var rgTypeUnion = map[string][]string{
	"c":        {"*.[chH]", "*.[chH].in", "*.cats"},
	"cpp":      {"*.[ChH]", "*.cc", "*.[ch]pp", "*.[ch]xx", "*.hh", "*.inl", "*.[ChH].in", "*.cc.in", "*.[ch]pp.in", "*.[ch]xx.in", "*.hh.in"},
	"cs":       {"*.cs"},
	"css":      {"*.css", "*.scss"},
	"go":       {"*.go"},
	"h":        {"*.h", "*.hh", "*.hpp"},
	"html":     {"*.htm", "*.html", "*.ejs"},
	"java":     {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":       {"*.js", "*.jsx", "*.vue", "*.cjs", "*.mjs"},
	"json":     {"*.json", "composer.lock", "*.sarif"},
	"kotlin":   {"*.kt", "*.kts"},
	"lua":      {"*.lua"},
	"md":       {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"},
	"markdown": {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"},
	"php":      {"*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"},
	"py":       {"*.py", "*.pyi"},
	"python":   {"*.py", "*.pyi"},
	"ruby":     {"config.ru", "Gemfile", ".irbrc", "Rakefile", "*.gemspec", "*.rb", "*.rbw", "*.rake"},
	"rust":     {"*.rs"},
	"scala":    {"*.scala", "*.sbt"},
	"sh": {".env", ".login", ".logout", ".profile", "profile", ".bash_login", "bash_login", ".bash_logout", "bash_logout",
		".bash_profile", "bash_profile", ".bashrc", "bashrc", "*.bashrc", ".cshrc", "*.cshrc", ".kshrc", "*.kshrc", ".tcshrc",
		".zshenv", "zshenv", ".zlogin", "zlogin", ".zlogout", "zlogout", ".zprofile", "zprofile", ".zshrc", "zshrc",
		"*.bash", "*.csh", "*.env", "*.ksh", "*.sh", "*.tcsh", "*.zsh"},
	"sql":        {"*.sql", "*.psql"},
	"swift":      {"*.swift"},
	"toml":       {"*.toml", "Cargo.lock"},
	"ts":         {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"typescript": {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"txt":        {"*.txt"},
	"yaml":       {"*.yaml", "*.yml"},
}

// RgTypeGlobs returns the globs of ripgrep's file type name as any
// version of ripgrep reads them (rgTypeUnion), or nil for a type the
// policy does not know.
func RgTypeGlobs(name string) []string { return rgTypeUnion[name] }

// RgTypeNames returns the file types RgTypeGlobs knows.
func RgTypeNames() []string { return slices.Sorted(maps.Keys(rgTypeUnion)) }

// rgTypeGlobs is the filters of rg -t NAME for a type RgTypeGlobs knows,
// nil for another name ("all", a type --type-add defines, one whose
// globs differ between ripgrep versions unknown here: any name).
func rgTypeGlobs(name string) []shWord {
	gs := rgTypeUnion[name]
	if gs == nil {
		return nil
	}
	out := make([]shWord, len(gs))
	for i, g := range gs {
		out[i] = shWord{text: g, lit: true}
	}
	return out
}
