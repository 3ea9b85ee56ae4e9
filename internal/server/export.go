package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// MaxImportBytes caps a POST /v1/import body. The body is decoded one
// medallion version at a time, so the cap bounds the time an import may
// take, not memory: 100k medallions of a few versions export to ~1 GiB.
const MaxImportBytes = 4 << 30

// transferTimeout is how long an export or import may take, reading its
// body and writing its answer.
const transferTimeout = 10 * time.Minute

// extendTransfer gives next the transfer timeout in place of the server's
// 30-second read and write timeouts, which would cut a large import's body
// or export's stream.
func extendTransfer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// Best effort, as extendWrite: a writer that cannot move its
		// deadlines keeps the server's.
		_ = rc.SetReadDeadline(time.Now().Add(transferTimeout))
		_ = rc.SetWriteDeadline(time.Now().Add(transferTimeout))
		next.ServeHTTP(w, r)
	})
}

// export answers GET /v1/export with every version of every medallion as
// JSON Lines. A failure before the first line is an ordinary error
// answer; after it the status is sent, so the connection is cut instead
// and the client sees a broken stream rather than a complete-looking
// short one.
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Export == nil {
		s.writeError(w, r, notFound("this daemon does not export"))
		return
	}
	if err := onlyParams(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	started := false
	n := 0
	err := s.cfg.Export(r.Context(), func(line []byte) error {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
		}
		n++
		_, err := w.Write(line)
		return err
	})
	switch {
	case err == nil && !started:
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
	case err == nil:
	case !started:
		s.writeError(w, r, err)
	default:
		if r.Context().Err() == nil {
			s.log.Error("export cut short", "versions_sent", n, "error", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// importMedallions answers POST /v1/import: JSON Lines of medallion
// versions as GET /v1/export writes them. Each medallion is stored as soon
// as its last version is read; an error stops the import and says how far
// it got (what was stored before stays).
func (s *Server) importMedallions(r *http.Request) (any, error) {
	if s.cfg.Import == nil {
		return nil, notFound("this daemon does not import")
	}
	if err := onlyParams(r); err != nil {
		return nil, err
	}
	resp := api.ImportResponse{Existing: []string{}}
	g := store.NewGroupVersions(func(vs []*medallion.Medallion) error {
		err := s.cfg.Import(r.Context(), vs)
		switch {
		case err == nil:
			resp.Imported++
			resp.Versions += len(vs)
		case errors.Is(err, store.ErrExists):
			resp.Existing = append(resp.Existing, vs[0].Meta.MedallionID)
		default:
			return err
		}
		return nil
	})
	stopped := func(line int, err error) error {
		if isBodyError(err) {
			return err // writeError has its own answer for an oversized body
		}
		where := fmt.Sprintf("import stopped at line %d (%d medallions imported before it, %d already stored)", line, resp.Imported, len(resp.Existing))
		msg := where + ": " + err.Error()
		var (
			ve     *medallion.ValidationError
			syntax *json.SyntaxError
			typ    *json.UnmarshalTypeError
		)
		switch {
		case errors.As(err, &ve), errors.Is(err, store.ErrBadImport), errors.As(err, &syntax), errors.As(err, &typ),
			errors.Is(err, io.ErrUnexpectedEOF), strings.HasPrefix(err.Error(), "json: unknown field"):
			return &apiError{http.StatusBadRequest, api.CodeInvalid, msg}
		case errors.Is(err, store.ErrDiskFull):
			return &apiError{http.StatusInsufficientStorage, api.CodeDiskFull, msg}
		}
		return fmt.Errorf("%s: %w", where, err)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	line := 0
	for {
		var m medallion.Medallion
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			return nil, stopped(line, err)
		}
		if err := g.Add(&m); err != nil {
			return nil, stopped(line, err)
		}
	}
	if err := g.Flush(); err != nil {
		return nil, stopped(line, err)
	}
	return resp, nil
}

// isBodyError: the body was too large; writeError has its own answer.
func isBodyError(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
