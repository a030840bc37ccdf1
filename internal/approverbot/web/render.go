package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticRoot embed.FS

// staticFS holds app.js, app.css and icon.svg.
var staticFS = func() fs.FS {
	sub, err := fs.Sub(staticRoot, "static")
	if err != nil {
		panic(err)
	}
	return sub
}()

// assetVersion maps each static file to a hash of its content: pages link
// /static/<name>?v=<hash>, so browsers may cache a file for long and still
// load a new one after an upgrade.
var assetVersion = func() map[string]string {
	out := map[string]string{}
	err := fs.WalkDir(staticFS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(staticFS, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[path] = hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		panic(err)
	}
	return out
}()

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"asset": func(name string) (string, error) {
		v, ok := assetVersion[name]
		if !ok {
			return "", fs.ErrNotExist
		}
		return "/static/" + name + "?v=" + v, nil
	},
}).ParseFS(templateFS, "templates/*.html"))

// contentSecurityPolicy allows the page's own files and nothing else: no
// inline script or style, no framing, forms only to itself.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secureHeaders adds the security headers every response of the channel
// carries.
func secureHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

var staticServer = http.StripPrefix("/static/", http.FileServerFS(staticFS))

// handleStatic serves the embedded files; no directory listings.
func handleStatic(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	v, ok := assetVersion[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Get("v") == v {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	staticServer.ServeHTTP(w, r)
}

// errorBody is the JSON error shape of every endpoint.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, msg
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"cannot encode the reply"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// loginData is what the login template renders.
type loginData struct {
	Error    string
	Approver string
	// Proxy is the trusted header's name when password sign-in is off.
	Proxy string
	// Next is where the sign-in leads ("/" or "/#q-<id>"), checked by
	// safeNext; deeplink.js fills it from the address's fragment.
	Next string
	// OIDC names the identity provider when OIDC sign-in is on ("" off);
	// Passwords says password sign-in is on.
	OIDC      string
	Passwords bool
}

func (c *Channel) renderLogin(w http.ResponseWriter, status int, d loginData) {
	if c.oidc != nil {
		d.OIDC = c.oidc.cfg.label()
	}
	d.Passwords = c.dummyHash != nil
	c.render(w, status, "login.html", d)
}

// loginData is the sign-in page with an error and where it leads.
func (c *Channel) loginData(msg, next string) loginData {
	return loginData{Error: msg, Proxy: c.web.TrustedHeader, Next: next}
}

// pageData is what the page template renders.
type pageData struct {
	Approver  string
	Display   string
	CSRF      string
	Teams     []string
	Cards     []cardData
	LingerMS  int64
	GuardMS   int64
	CanLogout bool
	Starting  bool
	// Open is set on a plane whose NATS has no authorization: the page
	// says so (approverbot.OpenPlaneText).
	Open string
}

// handlePage serves GET /: the page with the open questions.
func (c *Channel) handlePage(w http.ResponseWriter, r *http.Request) {
	p, ok := c.principal(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	s := c.ensureSession(w, &p)
	d := pageData{Approver: p.approver, Display: p.display, CSRF: s.csrf, Teams: c.cfg.Teams,
		LingerMS: c.linger.Milliseconds(), GuardMS: c.guard.Milliseconds(), CanLogout: c.web.TrustedHeader == ""}
	if c.cfg.OpenNATS() {
		d.Open = approverbot.OpenPlaneText
	}
	resp := c.responder()
	if resp == nil {
		d.Starting = true
	} else {
		now := c.now()
		for _, q := range resp.Open() {
			if c.sees(p, q) {
				d.Cards = append(d.Cards, newCardData(q, p.approver, now))
			}
		}
	}
	c.render(w, http.StatusOK, "page.html", d)
}

// render executes a template into a buffer first, so that a failure yields
// a clean 500 instead of half a page.
func (c *Channel) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		c.log.Error("web: template failed", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// questionView renders q for viewer.
func (c *Channel) questionView(q approverbot.Question, viewer string) (QuestionView, error) {
	var buf bytes.Buffer
	v := approverbot.Present(q, approverbot.DefaultLimits)
	d := cardFromView(v, viewer, c.now())
	d.addEdit(q, viewer)
	// The card's answers name the version it shows (data-digest).
	d.Digest = q.ShownDigest()
	if err := templates.ExecuteTemplate(&buf, "card", d); err != nil {
		return QuestionView{}, err
	}
	qv := QuestionView{RequestID: q.Request.RequestID, Question: q.ApprovalNeeded, SessionGrants: v.Session.Said(), AlwaysGrants: v.Always.Said(),
		Actions: actionsOf(q, v, viewer), Mine: d.Mine, Tool: v.Tool, Summary: summaryOf(v), Digest: d.Digest, HTML: buf.String()}
	if d.Edit != nil {
		qv.Edit = &EditDraft{Shell: d.Edit.Shell, Text: d.Edit.Text}
	}
	return qv, nil
}
