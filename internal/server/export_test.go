package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/store"
)

func startTransfer(t *testing.T) *env {
	t.Helper()
	return startWith(t, func(c *Config, st *store.Badger) { c.Export, c.Import = exportJSON(st), st.Import })
}

// TestExportImportOverTheSocket: what one daemon exports another imports
// whole; a second import leaves everything as it is and lists the ids; a
// bad line stops the import with its number and a 400.
func TestExportImportOverTheSocket(t *testing.T) {
	ctx := context.Background()
	a := startTransfer(t)
	a.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m1", "repo:muse"), nil)
	a.want(t, http.StatusCreated, "POST", "/v1/medallions", sample("m2", "repo:site"), nil)
	next := sample("m1", "repo:muse")
	next.Summary.HighLevel = "second version"
	a.want(t, http.StatusOK, "PUT", "/v1/medallions/m1", next, nil)

	var out bytes.Buffer
	if err := client.New(a.sock).Export(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Fatalf("exported %d lines, want 3:\n%s", n, out.String())
	}

	b := startTransfer(t)
	cb := client.New(b.sock)
	res, err := cb.Import(ctx, bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported != 2 || res.Versions != 3 || len(res.Existing) != 0 {
		t.Errorf("import: %+v", res)
	}
	var again bytes.Buffer
	if err := cb.Export(ctx, &again); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Errorf("export after import differs:\n%s\nwant\n%s", again.String(), out.String())
	}
	var h api.HistoryResponse
	b.want(t, http.StatusOK, "GET", "/v1/medallions/m1/history", nil, &h)
	if len(h.Versions) != 2 {
		t.Errorf("history after import: %+v", h)
	}

	res, err = cb.Import(ctx, bytes.NewReader(out.Bytes()))
	if err != nil || res.Imported != 0 || strings.Join(res.Existing, ",") != "m1,m2" {
		t.Errorf("second import: %+v, %v", res, err)
	}

	bad := strings.Replace(out.String(), `"schema_version"`, `"schema_versoin"`, 1)
	_, err = client.New(startTransfer(t).sock).Import(ctx, strings.NewReader(bad))
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "import stopped at line 1") {
		t.Errorf("bad line: %v", err)
	}
}

// TestExportEmptyAndDisabled: an empty store exports nothing, and a daemon
// without export says so.
func TestExportEmptyAndDisabled(t *testing.T) {
	var out bytes.Buffer
	if err := client.New(startTransfer(t).sock).Export(context.Background(), &out); err != nil || out.Len() != 0 {
		t.Errorf("empty export: %q, %v", out.String(), err)
	}
	err := client.New(start(t).sock).Export(context.Background(), &out)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("export without Config.Export: %v", err)
	}
}

// exportJSON is Config.Export as the daemon wires it.
func exportJSON(st *store.Badger) func(ctx context.Context, fn func([]byte) error) error {
	return func(ctx context.Context, fn func([]byte) error) error {
		_, err := st.ExportJSON(ctx, fn)
		return err
	}
}
