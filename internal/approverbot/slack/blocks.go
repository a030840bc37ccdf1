package slack

// Block Kit objects, as documented at https://docs.slack.dev/reference/block-kit.
// Only what the channel renders is modelled.

// Limits documented by Slack that the renderer stays within.
const (
	maxSectionText   = 3000
	maxHeaderText    = 150
	maxButtonText    = 75
	maxContextElems  = 10
	maxConfirmTitle  = 100
	maxConfirmText   = 300
	maxConfirmButton = 30
	maxBlocks        = 50
	// maxFallbackText bounds the top-level text (notifications, screen
	// readers); Slack truncates beyond 40,000 but recommends 4,000.
	maxFallbackText = 4000
)

// textObject is a composition text object: plain_text is shown as is;
// mrkdwn is parsed (so its dynamic parts must be escaped).
type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Emoji is false on every plain_text: Slack's default (true) shows
	// :name: as an emoji, so a command holding ":x:" would not read as
	// what runs. Absent on mrkdwn, which does not take it.
	Emoji *bool `json:"emoji,omitempty"`
}

var noEmoji = new(bool)

func plain(s string) *textObject  { return &textObject{Type: "plain_text", Text: s, Emoji: noEmoji} }
func mrkdwn(s string) *textObject { return &textObject{Type: "mrkdwn", Text: s} }

type headerBlock struct {
	Type string      `json:"type"` // header
	Text *textObject `json:"text"`
}

type sectionBlock struct {
	Type string      `json:"type"` // section
	Text *textObject `json:"text"`
}

type contextBlock struct {
	Type     string        `json:"type"` // context
	Elements []*textObject `json:"elements"`
}

type actionsBlock struct {
	Type     string   `json:"type"` // actions
	BlockID  string   `json:"block_id,omitempty"`
	Elements []button `json:"elements"`
}

type button struct {
	Type     string         `json:"type"` // button
	Text     *textObject    `json:"text"`
	ActionID string         `json:"action_id"`
	Value    string         `json:"value"`
	URL      string         `json:"url,omitempty"`   // a link button
	Style    string         `json:"style,omitempty"` // primary | danger
	Confirm  *confirmDialog `json:"confirm,omitempty"`
}

type confirmDialog struct {
	Title   *textObject `json:"title"`
	Text    *textObject `json:"text"`
	Confirm *textObject `json:"confirm"`
	Deny    *textObject `json:"deny"`
	Style   string      `json:"style,omitempty"`
}

// richTextBlock holds structured text: its elements are never parsed for
// formatting, links or mentions, so agent-supplied commands are shown
// exactly as they are.
type richTextBlock struct {
	Type     string `json:"type"` // rich_text
	Elements []any  `json:"elements"`
}

// richContainer is a rich_text_section, rich_text_preformatted or
// rich_text_list.
type richContainer struct {
	Type     string `json:"type"`
	Style    string `json:"style,omitempty"` // lists: bullet | ordered
	Elements []any  `json:"elements"`
}

type richText struct {
	Type  string     `json:"type"` // text
	Text  string     `json:"text"`
	Style *richStyle `json:"style,omitempty"`
}

type richStyle struct {
	Bold   bool `json:"bold,omitempty"`
	Italic bool `json:"italic,omitempty"`
	Code   bool `json:"code,omitempty"`
}

func rtext(s string) richText { return richText{Type: "text", Text: s} }
func rbold(s string) richText { return richText{Type: "text", Text: s, Style: &richStyle{Bold: true}} }
func rcode(s string) richText { return richText{Type: "text", Text: s, Style: &richStyle{Code: true}} }
func ritalic(s string) richText {
	return richText{Type: "text", Text: s, Style: &richStyle{Italic: true}}
}
func rsection(el ...any) richContainer {
	return richContainer{Type: "rich_text_section", Elements: el}
}
func rpre(s string) richContainer {
	return richContainer{Type: "rich_text_preformatted", Elements: []any{rtext(s)}}
}
func rlist(style string, items ...richContainer) richContainer {
	el := make([]any, len(items))
	for i, it := range items {
		el[i] = it
	}
	return richContainer{Type: "rich_text_list", Style: style, Elements: el}
}
