package checkpoint

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Recorder is a stand-in Curator that only records what each checkpoint
// handed it: it is NOT curation. It stores no medallion and returns an
// empty Result, so the episode's buffer is cleared with nothing made of it.
// It exists so that the trigger policy runs end to end (and can be watched
// in the log) until the real curator replaces it.
type Recorder struct {
	log hclog.Logger
	max int
	now func() time.Time

	mu      sync.Mutex
	records []Record
}

// Record is what the Recorder kept of one checkpoint.
type Record struct {
	At        time.Time `json:"at"`
	SessionID string    `json:"session_id"`
	Scope     []string  `json:"scope"`
	Agent     string    `json:"agent"`
	Trigger   string    `json:"trigger"`
	Note      string    `json:"note,omitempty"`
	Events    int       `json:"events"`
	// FirstSeq and LastSeq bound the buffer positions of the events.
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// Counts of the derived context.
	FilesRead   int `json:"files_read"`
	FilesEdited int `json:"files_edited"`
	Tools       int `json:"tools"`
	Errors      int `json:"errors"`
	Fixes       int `json:"fixes"`
	Corrections int `json:"corrections"`
	Todos       int `json:"todos"`
}

// DefaultRecords is how many records a Recorder keeps when given no limit.
const DefaultRecords = 100

var _ Curator = (*Recorder)(nil)

// NewRecorder returns a Recorder keeping the last max records (DefaultRecords
// when max <= 0) and logging each at Info.
func NewRecorder(max int, logger hclog.Logger) *Recorder {
	if max <= 0 {
		max = DefaultRecords
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Recorder{log: logger, max: max, now: time.Now}
}

// Curate records ep and returns an empty Result.
func (r *Recorder) Curate(_ context.Context, ep Episode) (Result, error) {
	rec := Record{
		At: r.now().UTC(), SessionID: ep.SessionID, Scope: slices.Clone(ep.Scope), Agent: ep.Agent,
		Trigger: ep.Trigger, Note: ep.Note, Events: len(ep.Events),
		FilesRead: len(ep.Context.FilesRead), FilesEdited: len(ep.Context.FilesEdited), Tools: len(ep.Context.Tools),
		Errors: len(ep.Context.Errors), Fixes: len(ep.Context.Fixes), Corrections: len(ep.Context.Corrections),
		Todos: len(ep.Context.Todos),
	}
	if n := len(ep.Events); n > 0 {
		rec.FirstSeq, rec.LastSeq = ep.Events[0].Seq, ep.Events[n-1].Seq
	}
	// Counts only: transcript content stays out of logs above Debug.
	r.log.Info("episode recorded (no curator configured)", "session", rec.SessionID, "scope", rec.Scope,
		"agent", rec.Agent, "trigger", rec.Trigger, "events", rec.Events, "files_read", rec.FilesRead,
		"files_edited", rec.FilesEdited, "tools", rec.Tools, "errors", rec.Errors, "fixes", rec.Fixes,
		"corrections", rec.Corrections, "todos", rec.Todos)
	r.mu.Lock()
	r.records = append(r.records, rec)
	if len(r.records) > r.max {
		r.records = slices.Delete(r.records, 0, len(r.records)-r.max)
	}
	r.mu.Unlock()
	return Result{}, nil
}

// Records returns the kept records, oldest first.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}
