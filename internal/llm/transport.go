package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// retryTransport sits under go-openai's HTTP client and does what go-openai
// does not: a timeout per attempt, retries with backoff on 429, 5xx and
// transport errors (honouring Retry-After, which go-openai does not expose),
// a cap on the response body, and temperature 0 in the body (go-openai's
// `temperature` field is omitempty, so 0 would never be sent and servers
// would use their default, usually 0.7–1).
//
// It buffers each response body (at most maxBody bytes) before the attempt's
// context is cancelled, which is what makes a per-attempt timeout possible
// under a client that reads the body after RoundTrip returns.
type retryTransport struct {
	base       http.RoundTripper
	timeout    time.Duration // per attempt
	maxRetries int           // retries after the first attempt
	maxBody    int64
	maxWait    time.Duration // cap on one wait, Retry-After included
	log        hclog.Logger

	// sleep and now are swapped by tests so that waits are observed, not
	// slept.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time

	requests atomic.Int64 // HTTP attempts, for Stats
}

// trace carries per-call facts from the transport back to the caller through
// the request context. One call owns it, and the caller reads it only after
// the HTTP client returned, so it needs no lock.
type trace struct {
	attempts int
	waits    []time.Duration
}

type traceKey struct{}

func withTrace(ctx context.Context, t *trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// attemptTimeoutError is one attempt running out of Config.Timeout while the
// caller's context was still alive.
type attemptTimeoutError struct{ d time.Duration }

func (e *attemptTimeoutError) Error() string   { return fmt.Sprintf("no answer within %s", e.d) }
func (e *attemptTimeoutError) Timeout() bool   { return true }
func (e *attemptTimeoutError) Temporary() bool { return true }

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readRequestBody(req)
	if err != nil {
		return nil, err
	}
	body = withTemperatureZero(body)
	ctx := req.Context()
	tr, _ := ctx.Value(traceKey{}).(*trace)
	for attempt := 1; ; attempt++ {
		if tr != nil {
			tr.attempts = attempt
		}
		t.requests.Add(1)
		resp, err := t.once(req, body)
		wait, retry := t.retryable(resp, err, attempt)
		if !retry || attempt > t.maxRetries || ctx.Err() != nil {
			return resp, err
		}
		args := []any{"attempt", attempt, "wait", wait}
		if err != nil {
			args = append(args, "error", err)
		} else {
			args = append(args, "status", resp.Status)
		}
		t.log.Warn("llm request failed, retrying", args...)
		if tr != nil {
			tr.waits = append(tr.waits, wait)
		}
		if err := t.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// readRequestBody takes the whole request body (ours, small) so every attempt
// can send the same bytes.
func readRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return b, nil
}

// withTemperatureZero adds "temperature":0 as the first member of a JSON
// object body. It is a byte-level insertion, not a decode and re-encode, so
// the body stays exactly what go-openai marshalled plus a constant prefix —
// deterministic, as the replay server's keys require.
func withTemperatureZero(body []byte) []byte {
	if len(body) < 2 || body[0] != '{' || bytes.Contains(body, []byte(`"temperature":`)) {
		return body
	}
	const member = `"temperature":0`
	out := make([]byte, 0, len(body)+len(member)+1)
	out = append(out, '{')
	out = append(out, member...)
	if bytes.TrimSpace(body[1:])[0] != '}' {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// once makes one attempt and returns a response whose body is already in
// memory.
func (t *retryTransport) once(req *http.Request, body []byte) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := context.WithTimeout(parent, t.timeout)
	defer cancel()
	r := req.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }

	timedOut := func(err error) error {
		if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &attemptTimeoutError{t.timeout}
		}
		return err
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, timedOut(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > t.maxBody {
		return nil, fmt.Errorf("%w: %d bytes announced, limit %d", ErrReplyTooLarge, resp.ContentLength, t.maxBody)
	}
	// Read one byte past the limit to tell "exactly at the limit" from
	// "over it" without reading the rest.
	b, err := io.ReadAll(io.LimitReader(resp.Body, t.maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", timedOut(err))
	}
	if int64(len(b)) > t.maxBody {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrReplyTooLarge, t.maxBody)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Request = req
	return resp, nil
}

// retryable says whether an attempt's outcome deserves another attempt, and
// after how long.
func (t *retryTransport) retryable(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if err != nil {
		if errors.Is(err, ErrReplyTooLarge) {
			return 0, false // the same request would get the same reply
		}
		var dns *net.DNSError
		if errors.As(err, &dns) && dns.IsNotFound {
			return 0, false // a name that does not exist will not start to
		}
		return t.backoff(attempt), true
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), t.now()); ok {
			return min(d, t.maxWait), true
		}
		return t.backoff(attempt), true
	}
	return 0, false
}

// backoff is exponential from half a second, capped, with jitter so that
// several daemons behind one proxy do not retry in step.
func (t *retryTransport) backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<min(attempt-1, 16), t.maxWait)
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(s, 0)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
