// Package web provides the approver bot's web page channel: a login-protected
// page on which an on-call team, on as many devices as it likes, sees the
// open questions of the bot's teams live and answers them.
//
// The page is server-rendered with html/template (every card is one
// template, so tool arguments are escaped in one place), styled and scripted
// by static files embedded in the binary (no build step), and kept current
// by server-sent events: GET /events streams "question" (new or updated) and
// "resolved" events, with a heartbeat comment every 15 s; the browser
// re-fetches GET /api/questions whenever its event stream (re)connects, so
// nothing published while it was away is missed.
//
// # Endpoints
//
//	GET  /                 the page (redirects to /login when signed out)
//	GET  /login            the sign-in form (?next=, see below)
//	POST /login            sign in: form or JSON {approver, password};
//	                       with Accept: application/json the reply is
//	                       {approver, display, csrf_token, expires_at};
//	                       a form sign-in redirects to its next field
//	GET  /login/oidc       start an OIDC sign-in (?next=): to the provider
//	GET  /login/oidc/callback the provider's redirect back (web.oidc)
//	POST /logout           sign out (X-CSRF-Token required); signed in
//	                       with OIDC, 200 {end_session_url} when the
//	                       provider can end its session too
//	GET  /api/session      who is signed in, and the CSRF token
//	GET  /api/questions    {"questions": [view…]}, oldest first; a view's
//	                       edit {shell, text} is what an edit starts from,
//	                       its digest the version of the question it shows
//	POST /api/respond      {request_id, action, feedback, device, picks,
//	                       edit, digest} (an answer naming another
//	                       version than the open one is refused) →
//	                       {applied, state, reason, decision,
//	                       approvals_so_far, approvals_required, message}
//	GET  /api/grants       {"grants": [{grant, text, html}…]}: the standing
//	                       grants of the teams the viewer is a member of,
//	                       newest first (admin.list_grants, by = viewer)
//	POST /api/grants/revoke {grant_id} → {revoked: {grant, text, html},
//	                       message} (admin.revoke_grant, by = viewer;
//	                       X-CSRF-Token required; the brokers refuse with
//	                       403 unless the viewer is a member of one of the
//	                       grant's teams, 404 when it is gone)
//	GET  /events           text/event-stream of question and resolved events
//	GET  /static/…         the page's scripts (app.js, notify.js,
//	                       grants.js, the service worker sw.js), style
//	                       sheet and icon
//
// A link to one question, /#q-<request id> (a pager's, and a notification's
// click), opens the page at that card's head (static/deeplink.js), which
// also shows a card's verdict again right above its buttons while the card
// is taller than the window. Signed out, the script keeps the fragment
// through the sign-in in the form's next field; next may only be the page,
// "/" with a fragment (safeNext): anything else leads to "/", so the
// sign-in is no open redirect. /#grants opens the Grants view.
//
// action is one of approve (once), session and always (only when the
// question offers them: the brokers' offers), reject_soft and reject_hard;
// on an ask-user question (its view's actions list "answer") also answer,
// with picks [{question, options, text}]: per question (by index) the
// options picked (by index) and the words typed, which the core turns into
// the answer. edit approves with changes (with approve, session or
// always; never with answer: an ask-user question offers no editor): the
// text of the card's editor (the command of a shell call, else the
// arguments as a JSON object), parsed by the core's rules; the page
// (edit.js) checks it before sending too; while a card's editor is open
// its other approving buttons are off (app.js), so an approval never drops
// an edit pending beside it. The grants endpoints are
// rate-limited per approver (20 requests, then one a second): each one is
// a request to the brokers. Errors are JSON {"error": {"code", "message"}}
// with a matching HTTP status.
//
// # Security
//
// Approvers sign in with an OpenID Connect provider (web.oidc: code flow
// with PKCE, state bound to the browser by a SameSite=Lax cookie and used
// once, nonce checked, ID token verified with the provider's keys; the
// session ends with the ID token), with a password (bcrypt hashes from the bot's config;
// unknown ids cost the same as known ones; failed attempts are rate-limited
// per approver id and address) or, when web.trusted_header is set, by a
// header an authenticating reverse proxy sets. Sessions are random 256-bit
// ids kept server-side with an absolute expiry, in an HttpOnly, Secure,
// SameSite=Strict cookie. Every state-changing request needs the session's
// CSRF token in the X-CSRF-Token header and must not come from another
// origin (Sec-Fetch-Site, Origin or Referer); JSON endpoints take
// application/json only. Every response carries a strict Content Security
// Policy (no inline script or style), X-Frame-Options DENY, nosniff and
// Referrer-Policy same-origin.
package web
