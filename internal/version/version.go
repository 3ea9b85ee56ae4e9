// Package version reports the build version shared by medalliond and
// medallionctl, so each side can tell when the other is a different build.
package version

import (
	"runtime/debug"
	"sync"
)

// Version is set at link time (-ldflags "-X .../internal/version.Version=v1.2.3");
// otherwise it comes from the module build info, or "dev".
var Version = ""

// String returns the build version.
func String() string {
	if Version != "" {
		return Version
	}
	return moduleVersion()
}

// moduleVersion is the version the module build info gives, read once:
// debug.ReadBuildInfo parses the whole text the linker embedded (every
// dependency) at each call, and the daemon puts the version on every
// response, the client on every request (issue 12: the hook's round trip).
var moduleVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
})
