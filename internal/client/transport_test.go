package client

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
)

// TestReadResponse checks the HTTP/1.1 subset the client reads, on the
// bytes a server may send.
func TestReadResponse(t *testing.T) {
	big := strings.Repeat("x", maxResponseBytes+10)
	tests := []struct {
		name, raw, method string
		status            int
		version, body     string
		wantErr           string
	}{
		{name: "content length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nMedallion-Version: v1\r\n\r\nhello",
			status: 200, version: "v1", body: "hello"},
		{name: "header names any case, LF only", raw: "HTTP/1.1 404 Not Found\ncontent-length: 2\nmedallion-version:  v2 \n\n{}",
			status: 404, version: "v2", body: "{}"},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n",
			status: 200, body: "hello, world"},
		{name: "until the connection ends", raw: "HTTP/1.0 500 Internal Server Error\r\n\r\npanic page",
			status: 500, body: "panic page"},
		{name: "no body for 204", raw: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "body capped", raw: "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(big)) + "\r\n\r\n" + big,
			status: 200, body: big[:maxResponseBytes+1]},
		{name: "chunked body capped", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(big)), 16) + "\r\n" + big + "\r\n0\r\n\r\n",
			status: 200, body: big[:maxResponseBytes+1]},
		{name: "malformed status line", raw: "SSH-2.0-OpenSSH\r\n\r\n", wantErr: "malformed status line"},
		{name: "malformed header", raw: "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", wantErr: "malformed line"},
		{name: "bad length", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantErr: "bad Content-Length"},
		{name: "short body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello", wantErr: "unexpected EOF"},
		{name: "bad chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", wantErr: "bad chunk size"},
		{name: "head too large", raw: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHeaderBytes) + "\r\n\r\n", wantErr: "too large"},
		{name: "cut in the head", raw: "HTTP/1.1 200 OK\r\nContent-Le", wantErr: "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = "GET"
			}
			resp, err := readResponse(bufio.NewReader(strings.NewReader(tt.raw)), method)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.status != tt.status || resp.version != tt.version || string(resp.body) != tt.body {
				t.Errorf("got %d %q body of %d bytes, want %d %q body of %d bytes",
					resp.status, resp.version, len(resp.body), tt.status, tt.version, len(tt.body))
			}
		})
	}
}
