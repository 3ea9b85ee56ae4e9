package service

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SystemdUnit renders the systemd unit for o.
//
// A user unit is wanted by default.target, the target a user manager
// reaches at login; multi-user.target exists only in the system manager. A
// system unit puts the daemon's default paths where system services keep
// them (/etc, /var/lib, /run) by setting the XDG variables medalliond's
// defaults derive from; a config file still overrides them.
func SystemdUnit(o Options) string {
	var b strings.Builder
	b.WriteString("[Unit]\n")
	fmt.Fprintf(&b, "Description=%s\n", Description)
	b.WriteString("Documentation=https://github.com/medallionhq/medallion\n")
	if !o.User {
		b.WriteString("After=local-fs.target\n")
	}
	b.WriteString("\n[Service]\n")
	b.WriteString("Type=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s\n", systemdCommand(append([]string{o.Executable}, o.Arguments()...)))
	b.WriteString("Restart=on-failure\n")
	fmt.Fprintf(&b, "RestartSec=%d\n", RestartSec)
	if !o.User {
		b.WriteString("Environment=XDG_CONFIG_HOME=/etc XDG_DATA_HOME=/var/lib XDG_RUNTIME_DIR=/run\n")
	}
	b.WriteString("# medalliond logs to stderr; journald keeps it.\n")
	b.WriteString("\n[Install]\n")
	if o.User {
		b.WriteString("WantedBy=default.target\n")
	} else {
		b.WriteString("WantedBy=multi-user.target\n")
	}
	return b.String()
}

// systemdCommand joins args into an ExecStart line, quoting what systemd
// would otherwise split or expand: whitespace and quotes need quoting, "%"
// starts a specifier and "$" a variable, so both are doubled.
func systemdCommand(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "%", "%%")
		a = strings.ReplaceAll(a, "$", "$$")
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\;") {
			a = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(a) + `"`
		}
		quoted[i] = a
	}
	return strings.Join(quoted, " ")
}

// LaunchdPlist renders the launchd job for o. RunAtLoad starts it when the
// job is loaded (at login for an agent, at boot for a daemon); KeepAlive
// with SuccessfulExit=false restarts it only when it fails, like systemd's
// Restart=on-failure, and ThrottleInterval spaces the restarts like
// RestartSec. launchd discards stderr unless told where to put it.
func LaunchdPlist(o Options) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + LaunchdName + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	// The daemon also opens its log itself, to move it aside every 10 MB
	// as it runs: launchd only ever appends to the file.
	args := append([]string{o.Executable}, o.Arguments()...)
	for _, a := range append(args, "--log-file", launchdLogPath(o)) {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", xmlEscape(a))
	}
	b.WriteString(`	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
`)
	fmt.Fprintf(&b, "\t<key>ThrottleInterval</key>\n\t<integer>%d</integer>\n", RestartSec)
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Background</string>\n")
	fmt.Fprintf(&b, "\t<key>StandardErrorPath</key>\n\t<string>%s</string>\n", xmlEscape(launchdLogPath(o)))
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

// launchdLogPath is where the launchd job's stderr goes: the user's
// ~/Library/Logs for an agent, /Library/Logs for a system daemon.
func launchdLogPath(o Options) string {
	if o.User && o.Home != "" {
		return filepath.Join(o.Home, "Library", "Logs", "medalliond.log")
	}
	return "/Library/Logs/medalliond.log"
}

var xmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&quot;", `'`, "&apos;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }
