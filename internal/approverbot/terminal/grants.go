package terminal

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The grants keys work whether or not a question is waiting: g lists the
// grants of the operator's teams, numbered; v revokes one, by its id or its
// number in the latest list (in raw mode v asks for it on a line of its
// own; in line mode "v <id>" does it at once, and "v" alone asks). (r
// answers an ask-user question.)

// maxRevokeInput bounds the line typed after v.
const maxRevokeInput = 256

// revoking is a grant id being typed after v.
type revoking struct{ buf []rune }

// grantsKey handles g and v (key mode, question or not); false for any
// other key. arg is what followed the key on its line (line mode).
func (u *ui) grantsKey(ctx context.Context, key rune, arg string) bool {
	switch key {
	case 'g':
		if arg != "" {
			u.out.println("  g takes nothing after it; v <id> revokes a grant")
			u.prompt()
			return true
		}
		u.listGrants(ctx)
	case 'v':
		if arg != "" {
			u.revoke(ctx, arg)
			return true
		}
		u.revoking = &revoking{}
		u.prompt()
	default:
		return false
	}
	return true
}

// revokePrompt is the prompt of the id typed after v.
func (u *ui) revokePrompt() string {
	how := "Enter revokes, Esc goes back"
	if !u.raw {
		how = "Enter revokes, an empty line goes back"
	}
	return "  revoke grant: its id or its number in the list (" + how + ") › "
}

// revokeInput takes a key (raw mode) or the line (line mode) of the grant id
// being typed.
func (u *ui) revokeInput(ctx context.Context, ev inputEvent) {
	if !u.raw {
		u.revoking = nil
		if t := strings.TrimSpace(ev.line); t != "" {
			u.revoke(ctx, t)
			return
		}
		u.out.println("  " + u.st.dim("back to the keys; nothing was revoked"))
		u.prompt()
		return
	}
	r := u.revoking
	switch k := ev.key; {
	case k == '\r' || k == '\n':
		u.revoking = nil
		u.out.breakLine()
		if t := strings.TrimSpace(string(r.buf)); t != "" {
			u.revoke(ctx, t)
			return
		}
		u.out.println("  " + u.st.dim("nothing typed; nothing was revoked"))
		u.prompt()
	case k == keyEscape || k == keyEOF:
		u.revoking = nil
		u.out.println("  " + u.st.dim("back to the keys; nothing was revoked"))
		u.prompt()
	case editKey(k) || (unicode.IsPrint(k) && k != ' '):
		r.buf = u.typeKey(r.buf, k, maxRevokeInput)
	}
}

// grantAdmin is the bot's grants side; false (with the reason printed)
// when the responder has none.
func (u *ui) grantAdmin() (approverbot.GrantAdmin, bool) {
	ga, ok := u.r.(approverbot.GrantAdmin)
	if !ok {
		u.out.println(u.st.yellow("!") + " " + approverbot.ErrGrantsUnavailable.Error())
		u.prompt()
	}
	return ga, ok
}

// listGrants prints the grants of the operator's teams, numbered for v.
func (u *ui) listGrants(ctx context.Context) {
	ga, ok := u.grantAdmin()
	if !ok {
		return
	}
	u.out.breakLine()
	gs, err := ga.Grants(ctx, u.op.ID)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		u.out.println(u.st.yellow("!") + " grants not listed: " + line(approverbot.GrantErrorText(err)))
		u.prompt()
		return
	}
	u.listed = gs
	u.out.print(grantsText(u.st, gs))
	u.prompt()
}

// grantsText lists grants, numbered from 1, two lines each.
func grantsText(st style, gs []messages.Grant) string {
	if len(gs) == 0 {
		return "  No standing grants for your teams.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  Grants of your teams (%d); v revokes one:\n", len(gs))
	for i, g := range gs {
		fmt.Fprintf(&b, "  %d. %s  %s\n", i+1, st.bold(line(g.ID)), line(approverbot.GrantText(g)))
		b.WriteString("     " + st.dim(line(grantDetail(g))) + "\n")
	}
	return b.String()
}

// grantDetail is a grant's second line: who approved it, from which
// request, for which teams, when, and until when.
func grantDetail(g messages.Grant) string {
	parts := []string{approverbot.ScopeText(g.Scope), "approved by " + approverbot.GrantApprovers(g)}
	if g.RequestID != "" {
		parts = append(parts, "request "+g.RequestID)
	}
	if len(g.Teams) > 0 {
		parts = append(parts, "teams "+strings.Join(g.Teams, ", "))
	}
	if !g.CreatedAt.IsZero() {
		parts = append(parts, "created "+g.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	parts = append(parts, approverbot.GrantExpiry(g))
	if g.Legacy {
		parts = append(parts, "stored before grants had owners")
	}
	return strings.Join(parts, " · ")
}

// revoke revokes the grant arg names: an id, or a number of the latest
// list.
func (u *ui) revoke(ctx context.Context, arg string) {
	ga, ok := u.grantAdmin()
	if !ok {
		return
	}
	id := u.grantID(arg)
	u.out.breakLine()
	if err := approverbot.CheckGrantID(id); err != nil {
		u.out.println(u.st.yellow("!") + " nothing revoked: " + line(err.Error()))
		u.prompt()
		return
	}
	g, err := ga.RevokeGrant(ctx, u.op.ID, id)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		u.out.println(u.st.yellow("!") + " grant " + line(id) + " not revoked: " + line(approverbot.GrantErrorText(err)))
		u.prompt()
		return
	}
	u.out.println(u.st.green("✓") + " revoked grant " + line(g.ID) + ": " + line(approverbot.GrantText(g)) +
		u.st.dim(" — the next such call asks again"))
	u.prompt()
}

// grantID reads what follows v: an id of the latest list, else a number of
// it, else an id as typed (the brokers say whether it exists).
func (u *ui) grantID(arg string) string {
	arg = strings.TrimSpace(arg)
	for _, g := range u.listed {
		if g.ID == arg {
			return arg
		}
	}
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= len(u.listed) {
		return u.listed[n-1].ID
	}
	return arg
}
