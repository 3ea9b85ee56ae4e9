package curate

import (
	"regexp"
	"strings"

	"github.com/medallionhq/medallion/internal/medallion"
)

// Left for later: agents end a piece of work with their own list of what
// is not done ("Next steps:", "Remaining:", "Known limitations:" and a
// list, or "Next step: run the migration on staging"). Where the work
// stopped is what the next session needs first, and the agent that did the
// work is the one that knows it; the list is kept as open work. A newer
// list replaces the older one: the agent said again what is left.

// leftPrefix opens the open questions taken from such a list.
const leftPrefix = "Left for later: "

// maxLeft bounds the items taken from one list.
const maxLeft = 4

var (
	// leftHeading is a line that announces the list.
	leftHeading = regexp.MustCompile(`(?i)^(?:#+\s*|\*\*|__)?\s*(?:suggested |possible |recommended |remaining |open )?` +
		`(?:next steps?|remaining(?: work| items| issues| tasks)?|still (?:to do|open|missing|pending)|left to do|what's left|` +
		`not (?:yet )?(?:done|implemented|addressed|covered)|follow[- ]?ups?|todo|to do|open items|known (?:issues|limitations)|limitations)` +
		`[^:.!?]{0,40}:?\s*(?:\*\*|__)?\s*:?$`)
	// leftInline is a line that names what is left after its label.
	leftInline = regexp.MustCompile(`(?i)^(?:\*\*|__)?(?:next steps?|remaining|still to do|left to do|todo)(?:\*\*|__)?:(?:\*\*|__)?\s+(.{12,})$`)
	// leftHeads are the first bytes of what leftHeading or leftInline
	// matches, ASCII letters lowered: the marks, the words' first letters,
	// the first bytes of the long s (U+017F) and the Kelvin sign (U+212A),
	// which fold to "s" and "k".
	leftHeads = "#*_spronwlftk\xc5\xe2"
	// listItem is a bullet or numbered line of a list.
	listItem = regexp.MustCompile(`^(?:[-*•+]|\d+[.)])\s+(.+)$`)
)

// leftOver takes the list of what is left from the agent's final message
// of the episode: its last message after the user's last prompt.
func (x *extractor) leftOver(it *Items) {
	e := x.finalMessage()
	if e == nil {
		return
	}
	for _, t := range leftItems(e.Text) {
		it.LeftOpen = append(it.LeftOpen, Question{
			Question: leftPrefix + clip(t, maxStatement), BlockedOn: []string{},
			Priority: medallion.PriorityMedium, Evidence: x.evidence(e.ID),
		})
	}
}

// leftItems returns the items of the last list of what is left in text.
func leftItems(text string) []string {
	var out []string
	in := false
	for line := range strings.Lines(text) {
		l := strings.TrimSpace(line)
		label := opensWith(l, leftHeads)
		switch {
		case label && leftHeading.MatchString(l):
			out, in = nil, true
		case label && leftInline.MatchString(l):
			out, in = []string{leftInline.FindStringSubmatch(l)[1]}, false
		case in && l == "":
			in = len(out) == 0 // a blank line before the list, not after it
		case in:
			m := listItem.FindStringSubmatch(l)
			if m == nil {
				in = false
				continue
			}
			if item := strings.Trim(strings.TrimSpace(m[1]), "*_ "); len(content(item)) >= minContentWords && len(out) < maxLeft {
				out = append(out, item)
			}
		}
	}
	return out
}
