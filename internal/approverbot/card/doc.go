// Package card builds what an approval question shows, once for every
// channel: [Present] turns the brokers' question into a [View] (the
// verdict, the call, the offers and the texts around them) within a
// channel's [Limits]. It depends only on pkg/messages, the standard library
// and golang.org/x/net/idna.
//
// Everything an agent wrote passes through one sanitiser before any
// channel sees it: bidi controls, invisible format characters (Unicode Cf),
// control characters, combining marks drawn over others and every
// character with no standard look (private use, unassigned: only letters,
// marks, numbers, punctuation, symbols and U+0020 show as themselves) come
// out escaped as "<U+2067>", words that mix
// scripts and host names that only look like ASCII are flagged with their
// punycode, and the view carries a warning line whenever any were found
// ([View.Warnings]). A channel lays the view out in its own markup and
// escapes it for that markup; it never shows the raw question. [Escaped]
// finds the first character the card escapes, for editors, which can only
// show text raw, to gate on.
package card
