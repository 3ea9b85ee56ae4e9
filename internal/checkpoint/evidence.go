package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/redact"
	"github.com/medallionhq/medallion/internal/transcript"
)

// EvidenceAgent is the Agent of an episode made from explicit evidence.
const EvidenceAgent = "evidence"

// Bounds on explicit evidence, so one request cannot make an episode far
// larger than a checkpoint of a real session.
const (
	// MaxEvidenceText bounds the text of one event (a turn, the summary);
	// a longer one keeps its head and tail.
	MaxEvidenceText = 16 << 10
	// MaxArtefacts bounds the artefacts taken; the rest are dropped, in
	// key order.
	MaxArtefacts = 100
	// MaxArtefactText bounds one artefact's "artefact k: v" line.
	MaxArtefactText = 1 << 10
)

// ErrInvalidEvidence is wrapped by the errors of an evidence request that
// cannot be curated (no scope, nothing in it, too many turns).
var ErrInvalidEvidence = errors.New("invalid evidence checkpoint")

// CheckEvidence reports what is wrong with an evidence checkpoint request,
// naming the field; nil when FromEvidence can convert it.
func CheckEvidence(req api.CheckpointRequest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidEvidence, fmt.Sprintf(format, args...))
	}
	switch {
	case req.SessionID != "":
		return bad("session_id and nodes exclude each other: checkpoint a session, or evidence for a scope")
	case len(req.Nodes) == 0:
		return bad("nodes: give the graph nodes of the evidence's scope (for example repo:muse)")
	case req.Evidence == nil:
		return bad("evidence: give session_summary, transcripts or artefacts for the scope %s", strings.Join(req.Nodes, ", "))
	}
	for i, n := range req.Nodes {
		if strings.TrimSpace(n) == "" {
			return bad("nodes[%d] is blank", i)
		}
	}
	for i, t := range req.Tags {
		if strings.TrimSpace(t) == "" {
			return bad("tags[%d] is blank", i)
		}
	}
	ev := req.Evidence
	empty := strings.TrimSpace(ev.SessionSummary) == ""
	for _, t := range ev.Transcripts {
		empty = empty && strings.TrimSpace(t) == ""
	}
	if empty && len(ev.Artefacts) == 0 {
		return bad("evidence: session_summary, transcripts and artefacts are all empty")
	}
	turns := 0
	for _, t := range ev.Transcripts {
		turns += len(splitTurns(t))
	}
	if turns > MaxEpisodeEvents-1-MaxArtefacts {
		return bad("evidence.transcripts: %d turns, more than the %d one checkpoint takes", turns, MaxEpisodeEvents-1-MaxArtefacts)
	}
	return nil
}

// FromEvidence converts an evidence checkpoint request into the episode the
// curator takes, as if an agent had written it: the session summary is a
// compaction_summary event, each transcript turn a user_prompt or
// assistant_message, each artefact a system event "artefact K: V". All
// text is redacted. The same request always gives the same session and
// event ids, so the curator's evidence points at something stable; events
// are stamped with now.
func FromEvidence(req api.CheckpointRequest, now time.Time) (Episode, error) {
	if err := CheckEvidence(req); err != nil {
		return Episode{}, err
	}
	ev := req.Evidence
	nodes := slices.Clone(req.Nodes)
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)

	// The session id hashes the scope and the evidence: posting the same
	// evidence twice names the same session.
	body, err := json.Marshal(struct {
		Nodes    []string
		Evidence *api.Evidence
	}{nodes, ev})
	if err != nil {
		return Episode{}, fmt.Errorf("hash evidence: %w", err)
	}
	sum := sha256.Sum256(body)
	sid := "evidence-" + hex.EncodeToString(sum[:8])

	ep := Episode{
		SessionID: sid, Scope: nodes, Agent: EvidenceAgent, Trigger: TriggerEvidence,
		Note: redact.String(req.Note), Tags: slices.Clone(req.Tags),
	}
	add := func(kind transcript.Kind, subtype, text string) {
		seq := uint64(len(ep.Events) + 1)
		h := sha256.Sum256([]byte(sid + "\x00" + strconv.FormatUint(seq, 10) + "\x00" + string(kind) + "\x00" + text))
		ep.Events = append(ep.Events, episode.BufferedEvent{Seq: seq, Event: transcript.Event{
			ID: "ev-" + hex.EncodeToString(h[:12]), Kind: kind, Subtype: subtype, Time: now.UTC(),
			SessionID: sid, Agent: EvidenceAgent, Text: bound(redact.String(text), MaxEvidenceText),
		}})
		if e := &ep.Events[len(ep.Events)-1].Event; len(e.Text) < len(text) {
			e.TextBytes = len(text)
		}
	}
	if s := strings.TrimSpace(ev.SessionSummary); s != "" {
		add(transcript.KindCompactionSummary, "session_summary", s)
	}
	for _, t := range ev.Transcripts {
		for _, turn := range splitTurns(t) {
			add(turn.kind, turn.subtype, turn.text)
		}
	}
	keys := make([]string, 0, len(ev.Artefacts))
	for k := range ev.Artefacts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys[:min(len(keys), MaxArtefacts)] {
		add(transcript.KindSystem, "artefact", bound(fmt.Sprintf("artefact %s: %s", k, ev.Artefacts[k]), MaxArtefactText))
	}
	ep.Context = episode.Derive(ep.Events)
	return ep, nil
}

// turn is one speaker's part of an evidence transcript.
type turn struct {
	kind    transcript.Kind
	subtype string
	text    string
}

// speakers maps a line's lower-cased role prefix to its turn kind.
var speakers = []struct {
	prefix string
	kind   transcript.Kind
}{
	{"user:", transcript.KindUserPrompt},
	{"human:", transcript.KindUserPrompt},
	{"assistant:", transcript.KindAssistantMessage},
	{"agent:", transcript.KindAssistantMessage},
}

// splitTurns splits a transcript into turns: a line starting with a role
// prefix ("User:", "assistant:" …, any case) opens a turn, the lines after
// it continue it. Text before the first prefix is not attributed to anyone:
// it becomes a system event, so it can never pass for the user's words.
func splitTurns(text string) []turn {
	var turns []turn
	var cur *turn
	var b strings.Builder
	flush := func() {
		if cur != nil {
			cur.text = strings.TrimSpace(b.String())
			if cur.text != "" {
				turns = append(turns, *cur)
			}
		}
		b.Reset()
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		lower := strings.ToLower(trimmed)
		opened := false
		for _, sp := range speakers {
			if strings.HasPrefix(lower, sp.prefix) {
				flush()
				cur = &turn{kind: sp.kind}
				b.WriteString(strings.TrimSpace(trimmed[len(sp.prefix):]))
				opened = true
				break
			}
		}
		if opened {
			continue
		}
		if cur == nil {
			cur = &turn{kind: transcript.KindSystem, subtype: "transcript"}
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	flush()
	return turns
}

// bound keeps s within n bytes: its head and tail around a marker saying
// how much was left out, cut on rune boundaries.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// The marker's digits are those of len(s) at most, so keep leaves room
	// for the marker whatever is elided.
	keep := max(0, n-len(fmt.Sprintf(" […%d bytes elided…] ", len(s))))
	head, start := keep/2, len(s)-(keep-keep/2)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + fmt.Sprintf(" […%d bytes elided…] ", start-head) + s[start:]
}
