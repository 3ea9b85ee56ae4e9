package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// LLM configures Tier 1, the optional model curator. With no llm block
// the daemon never touches the network.
type LLM struct {
	// BaseURL is the OpenAI-compatible endpoint, e.g.
	// http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1.
	BaseURL string
	// Model is the model name the endpoint knows.
	Model string
	// APIKeyEnv names the environment variable holding the API key; the
	// key itself never sits in the config file. Empty for local servers.
	APIKeyEnv string
	// Timeout bounds one HTTP attempt.
	Timeout time.Duration
	// MaxInputTokens bounds one call's prompt; a longer digest becomes
	// several calls in order.
	MaxInputTokens int
	// DailyTokens caps prompt + reply tokens per UTC day, kept in the
	// store across restarts; 0 means no cap.
	DailyTokens int
	// Structured is how replies are held to the schema: one of
	// LLMStructuredModes.
	Structured string
	// Review is how model-made items reach the load: one of LLMReviewModes.
	Review string
}

// LLM defaults: a timeout that fits a local model on a CPU, a prompt that
// fits an 8k-context model with room for its answer, and a daily cap that
// keeps a forgotten cloud endpoint cheap (about 100 checkpoints a day).
var DefaultLLM = LLM{
	Timeout:        120 * time.Second,
	MaxInputTokens: 12000,
	DailyTokens:    2_000_000,
	Structured:     "auto",
	Review:         "auto",
}

// LLMStructuredModes: auto tries a strict json_schema and falls back to
// json_object where the server refuses it.
var LLMStructuredModes = []string{"auto", "json_schema", "json_object"}

// LLMReviewModes: auto marks unreviewed model items in the load,
// required leaves them out until approved, off shows them unmarked.
var LLMReviewModes = []string{"auto", "required", "off"}

func (d *blockDecoder) llm(b *hcl.Block, content *hcl.BodyContent) (*LLM, bool) {
	l := DefaultLLM
	ok := true
	str := func(key string) (string, bool) {
		attr, found := content.Attributes[key]
		if !found {
			return "", false
		}
		v, diag := stringValue(attr)
		if diag != nil {
			d.diags, ok = append(d.diags, diag), false
			return "", false
		}
		return strings.TrimSpace(v), true
	}
	if v, found := str("base_url"); found {
		u, err := url.Parse(v)
		switch {
		case err != nil:
			d.invalid(content.Attributes["base_url"], "llm", err)
			ok = false
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			d.invalid(content.Attributes["base_url"], "llm", fmt.Errorf("%q is not an http(s) URL such as \"http://127.0.0.1:11434/v1\"", v))
			ok = false
		case u.User != nil:
			d.invalid(content.Attributes["base_url"], "llm", errors.New("the URL holds credentials: put the key in an environment variable and name it in api_key_env"))
			ok = false
		default:
			l.BaseURL = strings.TrimRight(v, "/")
		}
	}
	if v, found := str("model"); found {
		if v == "" {
			d.invalid(content.Attributes["model"], "llm", errors.New("the model name is empty"))
			ok = false
		}
		l.Model = v
	}
	if v, found := str("api_key_env"); found {
		if looksLikeKey(v) {
			d.invalid(content.Attributes["api_key_env"], "llm", errors.New("this looks like a key, not the name of a variable: keys never go in the config file; export it (e.g. OPENAI_API_KEY=…) and set api_key_env = \"OPENAI_API_KEY\""))
			ok = false
		} else {
			l.APIKeyEnv = v
		}
	}
	if attr, found := content.Attributes["api_key"]; found {
		d.invalid(attr, "llm", errors.New("a key written in the config is refused: export it in an environment variable and name that variable in api_key_env"))
		ok = false
	}
	if v, found := str("timeout"); found {
		if dur, err := parseDuration(v, time.Second); err != nil || dur == 0 {
			if err == nil {
				err = errors.New("a timeout of 0 would wait forever on a dead endpoint")
			}
			d.invalid(content.Attributes["timeout"], "llm", err)
			ok = false
		} else {
			l.Timeout = dur
		}
	}
	for _, c := range []struct {
		key    string
		lo, hi int
		dst    *int
	}{
		{"max_input_tokens", 2000, 1_000_000, &l.MaxInputTokens},
		{"daily_tokens", 0, 1_000_000_000, &l.DailyTokens},
	} {
		if attr, found := content.Attributes[c.key]; found {
			if n, good := d.count(attr, "llm", c.lo, c.hi); good {
				*c.dst = n
			} else {
				ok = false
			}
		}
	}
	for _, e := range []struct {
		key     string
		allowed []string
		dst     *string
	}{
		{"structured", LLMStructuredModes, &l.Structured},
		{"review", LLMReviewModes, &l.Review},
	} {
		if v, found := str(e.key); found {
			if err := checkOneOf(v, e.allowed); err != nil {
				d.invalid(content.Attributes[e.key], "llm", err)
				ok = false
			} else {
				*e.dst = v
			}
		}
	}
	if ok && (l.BaseURL == "" || l.Model == "") {
		d.errorAt(b.DefRange, "Incomplete llm block",
			"An llm block needs base_url and model, e.g. base_url = \"http://127.0.0.1:11434/v1\" and model = \"qwen3:8b\".")
		ok = false
	}
	return &l, ok
}

// looksLikeKey tells a pasted key from a variable name: names are short
// upper-case words; keys are long, mixed-case, or carry a known prefix.
func looksLikeKey(v string) bool {
	if strings.HasPrefix(v, "sk-") || strings.HasPrefix(v, "sk_") || len(v) > 64 {
		return true
	}
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return true
		}
	}
	return false
}

// HCL renders the block as Load reads it.
func (l *LLM) HCL() string {
	return fmt.Sprintf("\nllm {\n  base_url         = %s\n  model            = %s\n  api_key_env      = %s\n  timeout          = %s\n  max_input_tokens = %d\n  daily_tokens     = %d\n  structured       = %s\n  review           = %s\n}\n",
		quoteHCL(l.BaseURL), quoteHCL(l.Model), quoteHCL(l.APIKeyEnv), quoteHCL(formatDuration(l.Timeout)),
		l.MaxInputTokens, l.DailyTokens, quoteHCL(l.Structured), quoteHCL(l.Review))
}
