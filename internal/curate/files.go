package curate

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/medallionhq/medallion/internal/episode"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/transcript"
)

// Files: the folders the session changed (subsystems) and the files it
// used most (entry points), inside the working directory only.

// rel shows a path relative to the event's working directory when it lies
// under it.
func (x *extractor) rel(e *transcript.Event, p string) string {
	cwd := e.CWD
	if cwd == "" {
		cwd = x.cwd()
	}
	if cwd != "" && filepath.IsAbs(p) {
		if r, err := filepath.Rel(cwd, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			return r
		}
	}
	return p
}

// cwd is the episode's first known working directory.
func (x *extractor) cwd() string {
	for i := range x.ep.Events {
		if c := x.ep.Events[i].Event.CWD; c != "" {
			return c
		}
	}
	return ""
}

// files turns the files tools touched into subsystems (their directories)
// and entry points (the most used files).
func (x *extractor) files(it *Items) {
	type dir struct {
		edited, read []string
		ids          []string
	}
	dirs := map[string]*dir{}
	var dirOrder []string
	uses := map[string]int{}
	fileIDs := map[string][]string{}
	var fileOrder []string
	for i := range x.ep.Events {
		e := &x.ep.Events[i].Event
		if e.Kind != transcript.KindToolCall {
			continue
		}
		edits := episode.EditsFiles(e.Tool)
		if searches(e.Tool) {
			// A search's path is the folder it looked in, not a file
			// the work went through.
			continue
		}
		for _, p := range e.FilePaths {
			r := x.rel(e, p)
			if r == "." || filepath.IsAbs(r) && x.cwd() != "" || artefact(r) {
				// Outside the working directory (a plan in the user's
				// home, a sibling checkout), or what a run left behind:
				// no part of this scope's code.
				continue
			}
			if uses[r] == 0 {
				fileOrder = append(fileOrder, r)
			}
			uses[r]++
			if ids := fileIDs[r]; len(ids) < maxEventIDs && (len(ids) == 0 || ids[len(ids)-1] != e.ID) {
				fileIDs[r] = append(ids, e.ID)
			}
			name := filepath.Dir(r)
			if name == "." {
				// Files at the root of the working directory belong to no
				// subsystem.
				continue
			}
			d := dirs[name]
			if d == nil {
				d = &dir{}
				dirs[name] = d
				dirOrder = append(dirOrder, name)
			}
			base := filepath.Base(r)
			if edits {
				if !slices.Contains(d.edited, base) {
					d.edited = append(d.edited, base)
				}
			} else if !slices.Contains(d.read, base) {
				d.read = append(d.read, base)
			}
			if len(d.ids) == 0 || d.ids[len(d.ids)-1] != e.ID {
				d.ids = append(d.ids, e.ID)
			}
		}
	}
	for _, name := range dirOrder {
		d := dirs[name]
		if len(d.edited) == 0 {
			// A folder only read is where the agent looked, not a part
			// of the project the session worked on; the entry points
			// keep the files it read most.
			continue
		}
		st := medallion.SubsystemInProgress
		notes := []string{"edited " + strings.Join(d.edited, ", ")}
		read := slices.DeleteFunc(slices.Clone(d.read), func(b string) bool { return slices.Contains(d.edited, b) })
		if len(read) > 0 {
			notes = append(notes, "read "+strings.Join(read, ", "))
		}
		it.Subsystems = append(it.Subsystems, Subsystem{
			Name: name, Status: st, Notes: clip(strings.Join(notes, "; "), maxStatement), Evidence: x.evidence(d.ids...),
		})
	}
	ranked := slices.Clone(fileOrder)
	slices.SortStableFunc(ranked, func(a, b string) int { return uses[b] - uses[a] })
	if len(ranked) > maxEntry {
		ranked = ranked[:maxEntry]
	}
	it.EntryPoints = ranked
	for _, p := range ranked {
		it.EntryEvidence = append(it.EntryEvidence, x.evidence(fileIDs[p]...))
	}
}

// artefactDirs hold what builds, tests and package managers write, not the
// project's own files.
var artefactDirs = map[string]bool{"node_modules": true, "test-results": true, "playwright-report": true,
	"coverage": true, "dist": true, "target": true, ".git": true, "__pycache__": true, ".next": true,
	".pytest_cache": true, "_build": true, "deps": true, "vendor": true}

// artefact reports a path a run left behind: under an artefact folder, or
// an image or a log.
func artefact(p string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if artefactDirs[seg] {
			return true
		}
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".log", ".trace", ".zip":
		return true
	}
	return false
}

// searches reports a tool that looks for files or text (Grep, Glob, LS,
// Gemini's search_file_content and list_directory): its paths are where it
// looked.
func searches(tool string) bool {
	t := strings.ToLower(tool)
	return t == "ls" || strings.Contains(t, "grep") || strings.Contains(t, "glob") ||
		strings.Contains(t, "search_file") || strings.Contains(t, "list_dir")
}
