//go:build !unix

package socket

import (
	"errors"
	"net"

	"github.com/hashicorp/go-hclog"
)

// ErrAlreadyRunning is wrapped by Listen's error when another medalliond
// holds the socket.
var ErrAlreadyRunning = errors.New("medalliond is already running")

// Option configures Listen.
type Option func()

// WithLogger is accepted for the same calls as on Unix; Listen fails anyway.
func WithLogger(hclog.Logger) Option { return func() {} }

// Listen fails: the socket's privacy rests on Unix file modes and peer
// credentials, which this OS does not provide in the same way.
func Listen(path string, _ ...Option) (net.Listener, error) {
	return nil, errors.New("medalliond's local API needs a Unix OS (Linux, macOS, BSD); socket " + path + " not created")
}
