package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/api"
	"github.com/medallionhq/medallion/internal/client"
	"github.com/medallionhq/medallion/internal/medallion"
	"github.com/medallionhq/medallion/internal/store"
)

// TestMedallionWritesRedacted: a secret in a medallion sent with put, in
// checkpoint evidence or in an import never reaches the store, the data
// dir's files or the log (issue 11: a ghp_ token and an AKIA key put with
// "medallionctl put -f" were stored).
func TestMedallionWritesRedacted(t *testing.T) {
	secrets := []string{
		"ghp_R7eL0q2Ws9XvTz4Kb8Nm1Pc6Yd3Hf5Ja0Ug", // GitHub token
		"AKIAZ7Q4XNBVL3MTYW2P",                    // AWS access key id
		"glpat-Xq3vR8sT1wY6zA9bC2dE",              // GitLab token
	}
	cfg := testConfig(t)
	r := start(t, cfg)
	c := client.New(cfg.Socket)
	ctx := context.Background()

	m := testMedallion("put-one")
	m.Decisions = []medallion.Decision{{ID: "D-001", Statement: "deploy with " + secrets[0], Rationale: "the key is " + secrets[1], Confidence: 0.9}}
	m.Affordances.Invariants = []string{"never print " + secrets[2]}
	if _, err := c.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Checkpoint(ctx, api.CheckpointRequest{Nodes: []string{"repo:evidence"}, Evidence: &api.Evidence{
		SessionSummary: "We rotated " + secrets[0] + " and " + secrets[1] + ".",
		Transcripts:    []string{"user: use " + secrets[2] + " for the registry\nassistant: done, the registry decision is made"},
	}}); err != nil {
		t.Fatal(err)
	}
	imported := testMedallion("imported-one")
	imported.Summary.HighLevel = "imported with " + secrets[0]
	imported.Meta.Version, imported.Meta.Status = 1, medallion.StatusActive
	imported.Meta.CreatedAt, imported.Meta.UpdatedAt = "2026-03-01T12:00:00.000000Z", "2026-03-01T12:00:00.000000Z"
	line, _ := json.Marshal(imported)
	if _, err := c.Import(ctx, bytes.NewReader(append(line, '\n'))); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := c.Export(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[REDACTED:") || strings.Count(out.String(), "\n") < 3 {
		t.Fatalf("export shows no redaction:\n%s", out.String())
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	// Every stored value, read back, and every byte under the data dir.
	st, err := store.Open(filepath.Join(cfg.DataDir, "store"), store.Options{GCInterval: -1, SpaceInterval: -1, VerifyInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	enc := json.NewEncoder(&dump)
	if err := st.Export(ctx, func(m *medallion.Medallion) error { return enc.Encode(m) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	haystacks := map[string]string{"export": out.String(), "store dump": dump.String(), "log": r.log.String()}
	err = filepath.WalkDir(cfg.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		haystacks[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range haystacks {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %s", where, s)
			}
		}
	}
}
