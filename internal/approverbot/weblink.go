package approverbot

import (
	"errors"
	"net/url"
)

// CheckWebURL checks the address of the approver web page a chat channel
// sends people to when it cannot show a question whole: empty (none), or
// an absolute http(s) URL without a fragment.
func CheckWebURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("not a URL")
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return errors.New("want an absolute http(s) URL such as https://approvals.example.com/")
	case u.Fragment != "":
		return errors.New("want no #fragment: the channel adds the question's")
	}
	return nil
}

// WebLink is the link to question id on the web page at base (checked by
// [CheckWebURL]); "" without a base. The page opens the question its
// fragment names (#q-<id>).
func WebLink(base, id string) string {
	if base == "" {
		return ""
	}
	return base + "#q-" + url.PathEscape(id)
}
