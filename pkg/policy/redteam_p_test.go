package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestCompressorsReplaceTheirFiles (red team M's "gzip -d writes"): a
// compressor replaces each file it is given — gzip FILE writes FILE.gz
// and removes FILE, gzip -d FILE.gz writes FILE — so the write rules meet
// both names; -c, -t and -l write nothing, -S changes the suffix, -N
// takes the name from the file and asks.
func TestCompressorsReplaceTheirFiles(t *testing.T) {
	p := progKPolicy(t, "gzip", "gunzip", "bzip2", "bunzip2")
	wantActions(t, p, []bashCase{
		{`gzip -d ~/.bashrc.gz`, policy.Deny},
		{`gunzip ~/.bashrc.gz`, policy.Deny},
		{`gzip --decompress --keep /home/dev/.bashrc.z`, policy.Deny},
		{`gzip -dS .x ~/.bashrc.x`, policy.Deny},
		{`gzip --suffix=.x -d ~/.bashrc.x`, policy.Deny},
		{`bunzip2 ~/.bashrc.bz2`, policy.Deny},
		{`bzip2 -d ~/.bashrc.bz2`, policy.Deny},
		{`gzip ~/.bashrc`, policy.Deny},
		{`bzip2 .git/hooks/pre-commit`, policy.Deny},
		{`gzip -d .git/hooks/pre-commit.gz`, policy.Deny},
		{`gzip -d ~/.bash*.gz`, policy.Deny},
		{`gzip -d "$F"`, policy.Deny},
		// Red team P: suffixes in any case, -S beside gzip's own, -r trees,
		// bzip2's NAME.out.
		{`gzip -dk ~/.bashrc.GZ`, policy.Deny},
		{`gzip -dkf -S .x ~/.bashrc.gz`, policy.Deny},
		{`gzip -rk .git`, policy.Deny},
		{`gzip -drk .git/hooks`, policy.Deny},
		{`bzip2 -dk .git/hooks/pre-commit`, policy.Deny},
		{`gzip -dN x.gz`, policy.Ask},
		{`gzip -dS "$S" x`, policy.Ask},
		// Ordinary work, and what writes nothing.
		{`gzip -dc ~/.bashrc.gz`, policy.Allow},
		{`gzip -t ~/.bashrc.gz`, policy.Allow},
		{`gzip -l ~/.bashrc.gz`, policy.Allow},
		{`gzip -9 build/out.txt`, policy.Allow},
		{`gunzip -k dist/app.tar.gz`, policy.Allow},
		{`bzip2 -dk logs/a.log.bz2`, policy.Allow},
		{`gzip -dN -n x.gz`, policy.Allow},
	})
	// A feeder's paths: gzip {} writes each with .gz, gunzip {} each
	// without its extension; gzip -d NAME without a suffix writes NAME.
	fed := mustParsePolicy(t, "fedgz.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(find *)", action: allow }
  - { rule: "bash(gzip *)", action: allow }
  - { rule: "bash(gunzip *)", action: allow }
  - { rule: "@write(~/.profile)", action: deny }
  - { rule: "@write(~/.profile.gz)", action: deny }
`)
	wantActions(t, fed, []bashCase{
		{`find /home/dev -maxdepth 1 -name .profile.gz -exec gunzip {} \;`, policy.Deny},
		{`find /home/dev -maxdepth 1 -name .profile -exec gzip -k {} \;`, policy.Deny},
		{`gzip -dk /home/dev/.profile`, policy.Deny},
		{`find src -name '*.gz' -exec gunzip {} \;`, policy.Allow},
		{`find src -name '*.log' -exec gzip {} \;`, policy.Allow},
	})
}

// TestUnknownProgramsMayWriteTheirOperands: a program the table does not
// know (or knows only in part) may write what it is given — sponge FILE,
// shred FILE, a converter rewriting its input — so a deny or ask rule on
// writing an operand, or a path under one it may walk, makes the command
// ask; a write no rule names changes nothing.
func TestUnknownProgramsMayWriteTheirOperands(t *testing.T) {
	p := progKPolicy(t, "sponge", "dos2unix", "mytool", "npm", "xz", "zstd", "iconv", "ar")
	wantActions(t, p, []bashCase{
		{`sponge ~/.bashrc`, policy.Ask},
		{`dos2unix /home/dev/.bashrc`, policy.Ask},
		{`mytool --out=.git/hooks/pre-commit`, policy.Ask},
		{`mytool --config=/home/dev/.bashrc`, policy.Ask},
		{`npm pack --pack-destination .git/hooks`, policy.Ask},
		{`mytool ~/.ssh/config`, policy.Deny},
		// Red team P: the stem a decompressor or converter writes, a value
		// attached after any letter of a run of flags, a rule covering
		// whatever a walked directory holds.
		{`xz -d ~/.bashrc.xz`, policy.Ask},
		{`zstd -d /home/dev/.bashrc.zst`, policy.Ask},
		{`iconv -co.git/config -f a b`, policy.Ask},
		{`ar --output=.git x`, policy.Ask},
		// Ordinary work: writes outside the workspace no rule names.
		{`sponge out.txt`, policy.Allow},
		{`dos2unix /tmp/x.txt`, policy.Allow},
		{`mytool build src`, policy.Allow},
		{`xz -d data.csv.xz`, policy.Allow},
		{`mytool -la`, policy.Allow},
	})
	// The working directory an unknown program may walk unnamed is read,
	// not written: a write rule anchored in the project does not make
	// every such program ask (red team P's friction).
	anchored := mustParsePolicy(t, "anchored.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(eslint *)", action: allow }
  - { rule: "bash(gh *)", action: allow }
  - { rule: "@write(/home/dev/proj/deploy/**)", action: deny }
`)
	wantActions(t, anchored, []bashCase{
		{`eslint --version`, policy.Allow},
		{`gh pr view 1`, policy.Allow},
		{`eslint src`, policy.Allow},
		{`eslint --fix deploy`, policy.Ask},
		{`eslint --fix .`, policy.Ask},
	})
}

// TestRunnerShellMode (red team M's "pnpm exec -c"): with -c or
// --shell-mode, pnpm exec and dlx run their words as one shell script:
// each command of it is judged, not the first word as a program.
func TestRunnerShellMode(t *testing.T) {
	p := progKPolicy(t, "pnpm", "ls", "cat")
	wantActions(t, p, []bashCase{
		{`pnpm exec -c 'ls; cat .env'`, policy.Deny},
		{`pnpm exec --shell-mode 'ls > ~/.bashrc'`, policy.Deny},
		{`pnpm exec -c ls '&&' cat .env`, policy.Deny},
		{`pnpm dlx -c 'cat ~/.ssh/id_rsa'`, policy.Deny},
		{`pnpm exec -c 'rm -rf build'`, policy.Ask},
		{`pnpm exec -c "$CMD"`, policy.Ask},
		{`pnpm exec -c 'ls -la'`, policy.Allow},
		// Red team P's P11: -r runs the command in every package's
		// directory, where ../.. is not the project's parent.
		{`pnpm exec -r cat ../../../.ssh/config`, policy.Deny},
		{`pnpm exec -r cat README.md`, policy.Allow},
		// Red team Q's Q9: pnpm recursive (m, multi) exec is exec -r.
		{`pnpm m exec cat ../../../.ssh/config`, policy.Deny},
		{`pnpm multi exec -c 'cat ~/.ssh/id_rsa'`, policy.Deny},
		{`pnpm recursive exec cat README.md`, policy.Allow},
	})
}

// TestCurlLocalServices: curl's other protocols and a Unix socket reach
// local services the rules cannot see — gopher:// writes any bytes to a
// port (a Redis, a memcached), the Docker socket runs containers as root —
// so they ask; the web's protocols are what a rule allowing curl means.
func TestCurlLocalServices(t *testing.T) {
	p := progKPolicy(t, "curl")
	wantActions(t, p, []bashCase{
		{`curl gopher://127.0.0.1:6379/_FLUSHALL`, policy.Ask},
		{`curl GoPhEr:/127.0.0.1:6379/_x`, policy.Ask},
		{`curl -s --url dict://localhost:11211/stats`, policy.Ask},
		{`curl telnet://localhost:25`, policy.Ask},
		{`curl --unix-socket /var/run/docker.sock http://d/containers/json`, policy.Ask},
		{`curl --abstract-unix-socket x http://d/`, policy.Ask},
		// Red team P: the protocol curl guesses from a host name, and
		// redirects let to other protocols.
		{`curl dict.localhost:6379/CONFIG`, policy.Ask},
		{`curl u:p@LDAP.example/x`, policy.Ask},
		{`curl -L --proto-redir +dict http://x`, policy.Ask},
		{`curl -L --proto-redir '=all' http://x`, policy.Ask},
		{`curl -L --proto-redir=-all,+https http://x`, policy.Allow},
		{`curl 'dic%74.localhost:6399/x'`, policy.Ask},
		{`curl ftp.example.com/x`, policy.Allow},
		{`curl dictionary.example/x`, policy.Allow},
		{`curl -sS https://example.com/a`, policy.Allow},
		{`curl HTTP://example.com`, policy.Allow},
		{`curl localhost:8080/health`, policy.Allow},
		{`curl -o out.bin ftp://example.com/y`, policy.Allow},
	})
}

// TestPartialEntryListedOptions (red team O's O9, friction): the words
// of a partial entry's options that its sub-command lists are read as the
// entry says, not as an unknown program's — docker run -e K=.env sets a
// variable, it reads no .env — while the options it does not list (-v,
// --mount) and clusters with a letter it does not know keep the closed
// reading.
func TestPartialEntryListedOptions(t *testing.T) {
	p := progKPolicy(t, "docker")
	wantActions(t, p, []bashCase{
		{`docker run -e K=.env alpine true`, policy.Allow},
		{`docker run --rm -it -eK=.env --label file=.env -w /app alpine true`, policy.Allow},
		{`docker run --env=K=.env alpine true`, policy.Allow},
		{`docker run -v ~/.ssh:/k alpine true`, policy.Deny},
		{`docker run -itv ~/.ssh:/k alpine true`, policy.Deny},
		{`docker run --mount type=bind,src=/home/dev/.ssh,dst=/k alpine`, policy.Deny},
		{`docker run --env-file .env alpine`, policy.Deny},
		{`docker run --cidfile ~/.bashrc alpine`, policy.Deny},
		{`docker run -xe K=.env alpine`, policy.Deny},
	})
}

// TestFrictionP (friction corpus P): what today's models asked or denied
// without cause — a partial entry's words that are no paths (--head=HEAD)
// as writes, a program's operand that is a pattern as an unknown file
// (it names every file it matches, met anchored as a read of a pattern
// is), WebSocket URLs, gzip -a — and the tightenings that stay.
func TestFrictionP(t *testing.T) {
	p := mustParsePolicy(t, "frictionp.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(pnpm *)", action: allow }
  - { rule: "bash(docker *)", action: allow }
  - { rule: "bash(gzip *)", action: allow }
  - { rule: "bash(gunzip *)", action: allow }
  - { rule: "bash(sed *)", action: allow }
  - { rule: "bash(curl *)", action: allow }
  - { rule: "bash(find *)", action: allow }
  - { rule: "bash(pwd)", action: allow }
  - { rule: "bash(git rev-parse *)", action: allow }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@files(*.env.*)", action: deny }
  - { rule: "@write(~/.bashrc)", action: deny }
  - { rule: "@write(**/HEAD)", action: ask }
`)
	wantActions(t, p, []bashCase{
		{`pnpm nx affected --head=HEAD`, policy.Allow},
		{`docker build -t app --build-arg SHA=$(git rev-parse HEAD) .`, policy.Allow},
		{`docker run --rm alpine git log HEAD`, policy.Allow},
		{`curl -N wss://example.com/socket`, policy.Allow},
		{`gzip -a notes.txt`, policy.Allow},
		// A relative pattern placed under the working directory meets
		// the absolute rules there only: find . does not reach ~/.bashrc
		// from /home/dev/proj, ../.bashr? does.
		{`find . -name .bashrc -exec sed -i s/a/b/ {} \;`, policy.Allow},
		{`sed -i s/a/b/ ../.bashr?`, policy.Deny},
		{`cd .. && sed -i s/a/b/ ./.bashr?`, policy.Deny},
		// A loop over a pattern: "$f" is one of its matches, judged as
		// the pattern (friction corpus P: for f in data/*.gz; do gunzip
		// "$f"; done was denied as any path, whatever the rules).
		{`for f in ~/.bash*; do sed -i s/a/b/ "$f"; done`, policy.Deny},
		{`for f in .e*; do gzip "$f"; done`, policy.Deny},
		// $(pwd) is a value computed when the command runs (reading it
		// as ./, as the sitting first did, let git -C .. re-place it:
		// red team R's R2).
		{`sed -i s/a/b/ "$(pwd)/../.bashrc"`, policy.Deny},
		// What a pattern's own characters spell still meets the rules.
		{`sed -i s/a/b/ ~/.bash*`, policy.Deny},
		{`gunzip .e*.gz`, policy.Deny},
		{`pnpm exec mytool --out=x/HEAD`, policy.Ask},
	})
}

// TestPatternsAProgramWrites (red team Q's Q1, a regression caught
// before landing): a pattern a program writes names the directory's real
// files — .github/*/ is workflows, * is the Makefile — so a rule any of its
// names could meet applies, not only one its own characters spell; with
// no such rule it asks (bash picks the files), and a loop's "$f" over a
// pattern is that pattern.
func TestPatternsAProgramWrites(t *testing.T) {
	p := mustParsePolicy(t, "patternwrites.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "@write(**/Makefile)", action: deny }
  - { rule: "@write(**/.github/workflows/**)", action: deny }
  - { rule: "@write(~/.config/systemd/**)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`sed -i s/a/b/ .github/*/*.yml`, policy.Deny},
		{`echo x | tee *`, policy.Deny},
		{`echo x | tee */*`, policy.Deny},
		{`cp evil.yml .github/*/`, policy.Deny},
		{`echo x | tee ~/.config/*/user/x.service`, policy.Deny},
		{`gunzip -f *.gz`, policy.Deny},
		{`for f in *; do sed -i s/a/b/ "$f"; done`, policy.Deny},
		{`sed -i s/a/b/ src/*.ts`, policy.Ask},
		{`for f in data/*.gz; do gunzip "$f"; done`, policy.Deny},
		{`for f in data/*.csv.gz; do gunzip "$f"; done`, policy.Ask},
		{`sed -i s/a/b/ src/app.ts`, policy.Allow},
		// Red team Q's Q2, Q3, Q4, Q15: a decompressed file's stem under
		// -r, through a feeder's path with a suffix or a pattern, after a
		// -S the policy did not expect; gzip -r's unnamed members.
		{`gzip -drkf Makefile.gz`, policy.Deny},
		{`gzip -drk sub`, policy.Ask},
		{`find . -name 'Makefile.*' -exec gunzip {} \;`, policy.Deny},
		{`find . -name Makefile.gz -print0 | xargs -0 -I{} gunzip -f {}`, policy.Deny},
		{`find . -name Makefile -print0 | xargs -0 -I{} gunzip -f {}.gz`, policy.Deny},
		{`gunzip -S {} Makefile{}`, policy.Deny},
		{`gzip -dfS z Makefile.gz`, policy.Deny},
		{`docker compose config -o Makefile`, policy.Ask},
		{`unxz Makefile.xz`, policy.Ask},
		{`gzip -dk src/a.txt.gz`, policy.Allow},
	})
}

// TestCredentialVerbsThatPrintNoSecrets (friction corpus P): a CLI's verb
// that prints only names, or its store redacted, does not read the
// store's secrets; the verbs and options that print them still do.
func TestCredentialVerbsThatPrintNoSecrets(t *testing.T) {
	p := mustParsePolicy(t, "credverbs.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(gh *)", action: allow }
  - { rule: "bash(kubectl *)", action: allow }
  - { rule: "bash(aws *)", action: allow }
  - { rule: "@files(~/.config/gh/**)", action: deny }
  - { rule: "@files(~/.kube/**)", action: deny }
  - { rule: "@files(~/.aws/**)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`gh auth status`, policy.Allow},
		{`kubectl config current-context`, policy.Allow},
		{`kubectl config get-contexts`, policy.Allow},
		{`kubectl config view`, policy.Allow},
		{`aws configure list`, policy.Allow},
		{`gh auth status -t`, policy.Deny},
		{`gh auth status --show-token`, policy.Deny},
		{`gh auth token`, policy.Deny},
		{`kubectl config view --raw`, policy.Deny},
		{`kubectl config view "$O"`, policy.Deny},
		{`aws configure get aws_secret_access_key`, policy.Deny},
		// Red team Q's Q7: an option anywhere may print the secrets or
		// take the verb as its value.
		{`kubectl config view --flatten`, policy.Deny},
		{`gh auth status -at`, policy.Deny},
		{`kubectl config --user current-context view --raw`, policy.Deny},
		{`aws configure --region list get aws_secret_access_key`, policy.Deny},
		{`kubectl --context prod config get-contexts`, policy.Deny},
		// A kuberc file may alias view to view --raw.
		{`KUBERC=./k kubectl config view`, policy.Ask},
	})
}

// TestRedTeamQOpen (red team Q): the forms of file: URLs readers take, a
// value in a word that is not a literal given to an option, and a cd
// before an unknown program that walks its working directory.
func TestRedTeamQOpen(t *testing.T) {
	p := mustParsePolicy(t, "rtq.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "@files(~/.ssh/**)", action: deny }
  - { rule: "@files(~/.kube/**)", action: deny }
  - { rule: "@write(~/.bashrc)", action: deny }
  - { rule: "@write(/home/dev/proj/deploy/**)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`gio cat file:/home/dev/.kube/config`, policy.Deny},
		{`gio cat FILE:///home/dev/.kube/config`, policy.Deny},
		{`gio cat file://localhost/home/dev/.kube/config`, policy.Deny},
		{`gio cat file:///home/dev/%2ekube/config`, policy.Deny},
		{`ssh-keygen -yf$HOME/.ssh/id_ed25519`, policy.Deny},
		{`iconv -co$HOME/.bashrc -f a b`, policy.Ask},
		{`mytool --out=$HOME/.bashrc`, policy.Ask},
		{`cd web && eslint --version`, policy.Allow},
		{`cd web && eslint --fix ../deploy`, policy.Ask},
		{`gio cat file:///tmp/x`, policy.Allow},
	})
	// Q10: a walked pattern meets a rule covering what its directory holds.
	git := mustParsePolicy(t, "rtq-git.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@write(**/.git/**)", action: deny }
`)
	wantActions(t, git, []bashCase{
		{`ar --output .gi? x p.a`, policy.Ask},
		{`ar --output=.git x p.a`, policy.Ask},
		{`eslint src*`, policy.Allow},
	})
}

// TestRedTeamR (red team R, on this sitting's later commits): a relative
// pattern after a cd the analysis cannot follow, a word that only starts
// like a git revision, the stems of more decrypters and decompressors, a
// file: URL's fragment, values after '=', ',' and ':' in words with
// expansions.
func TestRedTeamR(t *testing.T) {
	p := mustParsePolicy(t, "rtr.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "@files(~/.ssh/**)", action: deny }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@files(~/.bashrc)", action: deny }
  - { rule: "@write(**/Makefile)", action: deny }
  - { rule: "@write(**/.git/**)", action: deny }
  - { rule: "@files(/etc/shadow)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`cd "$(echo ~/.ssh)"; cat *`, policy.Ask},
		{`cd "$(echo ~/.ssh)"; cat ./id*`, policy.Ask},
		{`git -C .. diff --no-index "$(pwd)/../.ssh/id_rsa" /dev/null`, policy.Deny},
		// kubectl's complete entry knows kustomize -o writes: the write
		// rule meets it.
		{`kubectl kustomize -o HEAD~/../Makefile`, policy.Deny},
		{`docker compose config --output=HEAD^/../Makefile`, policy.Deny},
		{`gpg --batch --passphrase x Makefile.pgp`, policy.Ask},
		{`ccdecrypt Makefile.cpt`, policy.Ask},
		{`gio cat "file:///etc/shadow#x"`, policy.Deny},
		{`gio cat "file:///etc/shado%77?x"`, policy.Deny},
		{`foo in=$HOME/.bashrc`, policy.Deny},
		{`foo +in=$HOME/.bashrc`, policy.Deny},
		{`docker build --secret id=x,src=$HOME/.ssh/id_rsa .`, policy.Deny},
		// Ordinary work.
		{`cat *.go`, policy.Allow},
		{`cd src && cat *.go`, policy.Allow},
		{`kubectl kustomize -o HEAD~2`, policy.Allow},
		// R8: pnpm recursive VERB other than exec reads its words.
		{`pnpm m cat ~/.ssh/id_rsa`, policy.Deny},
		{`pnpm recursive run build ~/.ssh/id_rsa`, policy.Deny},
		// R10: a directory a cd chose is met by the write rules.
		{`cd .git/hooks && cpio -i < /tmp/p.cpio`, policy.Ask},
		// R14: an expansion in a long option's name.
		{`diff --from-file${x}=/home/dev/.ssh/id_rsa x`, policy.Ask},
		{`foo --in${x}=/home/dev/.ssh/id_rsa`, policy.Deny},
		{`foo --$x=/home/dev/.bashrc`, policy.Deny},
		// R13: an unknown program with a recursive option writes files it
		// does not name under its directories.
		{`zstd -dfr .`, policy.Ask},
		{`pigz -dr sub`, policy.Ask},
		{`zstd -d x.zst`, policy.Allow},
		{`eslint --fix .`, policy.Allow},
		// Ordinary work after a cd.
		{`cd web && eslint --version`, policy.Allow},
	})
	// R12: a project .npmrc may point npm config ls at any file.
	npm := mustParsePolicy(t, "rtr-npm.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "@files(~/.npmrc)", action: deny }
`)
	wantActions(t, npm, []bashCase{
		{`npm config ls`, policy.Deny},
		{`echo userconfig=/home/dev/.ssh/id_rsa > .npmrc && npm config list`, policy.Deny},
	})
}
