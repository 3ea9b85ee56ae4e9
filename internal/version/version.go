// Package version reports the build version shared by medalliond and
// medallionctl, so each side can tell when the other is a different build.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X .../internal/version.Version=v1.2.3");
// otherwise it comes from the module build info, or "dev".
var Version = ""

// String returns the build version.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
