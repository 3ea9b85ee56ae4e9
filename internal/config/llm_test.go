package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func loadString(t *testing.T, src string) (*Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.hcl")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

func TestLLMBlock(t *testing.T) {
	c, err := loadString(t, `llm {
  base_url = "http://127.0.0.1:11434/v1/"
  model    = "qwen3:8b"
}`)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultLLM
	want.BaseURL, want.Model = "http://127.0.0.1:11434/v1", "qwen3:8b"
	if c.LLM == nil || *c.LLM != want {
		t.Fatalf("LLM = %+v, want %+v", c.LLM, want)
	}
	// HCL renders the block so that Load reads back the same values.
	back, err := loadString(t, string(c.HCL()))
	if err != nil {
		t.Fatalf("reload of HCL(): %v\n%s", err, c.HCL())
	}
	if *back.LLM != *c.LLM {
		t.Errorf("round trip %+v, want %+v", back.LLM, c.LLM)
	}

	c, err = loadString(t, `llm {
  base_url = "https://api.openai.com/v1"
  model = "gpt-5-mini"
  api_key_env = "OPENAI_API_KEY"
  timeout = "30s"
  max_input_tokens = 20000
  daily_tokens = 0
  structured = "json_object"
  review = "required"
}`)
	if err != nil {
		t.Fatal(err)
	}
	if l := c.LLM; l.APIKeyEnv != "OPENAI_API_KEY" || l.Timeout != 30*time.Second || l.MaxInputTokens != 20000 ||
		l.DailyTokens != 0 || l.Structured != "json_object" || l.Review != "required" {
		t.Errorf("LLM = %+v", l)
	}

	if c, err := loadString(t, `log_level = "info"`); err != nil || c.LLM != nil {
		t.Errorf("no llm block: LLM = %+v, err %v; want nil (no network)", c.LLM, err)
	}
}

func TestLLMBlockErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"key in config", `llm { base_url = "http://h/v1"  model = "m"  api_key = "sk-abc" }`, "a key written in the config is refused"},
		{"key as env name", `llm { base_url = "http://h/v1"  model = "m"  api_key_env = "sk-proj-abcdef" }`, "looks like a key"},
		{"missing model", `llm { base_url = "http://h/v1" }`, "needs base_url and model"},
		{"bad url", `llm { base_url = "localhost:11434"  model = "m" }`, "not an http(s) URL"},
		{"credentials in url", `llm { base_url = "http://u:p@h/v1"  model = "m" }`, "holds credentials"},
		{"bad mode", `llm { base_url = "http://h/v1"  model = "m"  structured = "xml" }`, "structured"},
		{"zero timeout", `llm { base_url = "http://h/v1"  model = "m"  timeout = "0" }`, "wait forever"},
		{"unknown key", `llm { base_url = "http://h/v1"  model = "m"  temperature = 1 }`, "temperature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// HCL's one-line blocks take one attribute: spread them.
			src := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(tc.src, "{ ", "{\n"), "  ", "\n"), " }", "\n}")
			_, err := loadString(t, src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
