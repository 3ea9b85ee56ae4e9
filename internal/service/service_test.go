package service

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// directives parses a systemd unit into "Section.Key" → values, ignoring
// comments and blank lines.
func directives(t *testing.T, unit string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(unit))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("unit line %q is not a Key=Value in a section", line)
			}
			out[section+"."+k] = append(out[section+"."+k], v)
		}
	}
	return out
}

func one(t *testing.T, d map[string][]string, key string) string {
	t.Helper()
	if len(d[key]) != 1 {
		t.Fatalf("%s = %q, want exactly one value", key, d[key])
	}
	return d[key][0]
}

func TestSystemdUnit(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		wantedBy  string
		execStart string
		env       bool
	}{
		{"user unit", Options{User: true, Executable: "/home/u/bin/medalliond"},
			"default.target", "/home/u/bin/medalliond run", false},
		{"user unit with config", Options{User: true, Executable: "/home/u/bin/medalliond", ConfigFile: "/home/u/.config/medallion/config.hcl"},
			"default.target", "/home/u/bin/medalliond run --config /home/u/.config/medallion/config.hcl", false},
		{"system unit", Options{Executable: "/usr/bin/medalliond", ConfigFile: "/etc/medallion/config.hcl"},
			"multi-user.target", "/usr/bin/medalliond run --config /etc/medallion/config.hcl", true},
		{"paths that need quoting", Options{User: true, Executable: "/opt/my apps/medalliond", ConfigFile: `/home/u/100%/$HOME/"c".hcl`},
			"default.target", `"/opt/my apps/medalliond" run --config "/home/u/100%%/$$HOME/\"c\".hcl"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit := SystemdUnit(tt.opts)
			d := directives(t, unit)
			if got := one(t, d, "Install.WantedBy"); got != tt.wantedBy {
				t.Errorf("WantedBy = %q, want %q", got, tt.wantedBy)
			}
			if got := one(t, d, "Service.Restart"); got != "on-failure" {
				t.Errorf("Restart = %q, want on-failure", got)
			}
			if got := one(t, d, "Service.RestartSec"); got != "5" {
				t.Errorf("RestartSec = %q, want 5", got)
			}
			if got := one(t, d, "Service.ExecStart"); got != tt.execStart {
				t.Errorf("ExecStart = %q, want %q", got, tt.execStart)
			}
			if got := len(d["Service.Environment"]) > 0; got != tt.env {
				t.Errorf("Environment set = %v, want %v", got, tt.env)
			}
			if strings.Contains(unit, "{{") {
				t.Errorf("unit contains a template action kardianos would expand:\n%s", unit)
			}
		})
	}
}

// plistDict decodes a plist's top-level dict into key → value, where a
// value is the element's text, the element name for <true/>/<false/>, the
// strings of an <array> joined by " ", or a nested dict rendered as
// "{Key:value}".
func plistDict(t *testing.T, src string) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(src))
	dec.Strict = true
	var parse func(depth int) (string, error)
	// readValue reads the element that starts with se.
	readValue := func(se xml.StartElement, depth int) (string, error) {
		switch se.Name.Local {
		case "true", "false":
			return se.Name.Local, dec.Skip()
		case "string", "integer":
			var s string
			err := dec.DecodeElement(&s, &se)
			return s, err
		case "array":
			var a struct {
				S []string `xml:"string"`
			}
			err := dec.DecodeElement(&a, &se)
			return strings.Join(a.S, " "), err
		case "dict":
			return parse(depth + 1)
		}
		return "", fmt.Errorf("unexpected <%s>", se.Name.Local)
	}
	top := map[string]string{}
	parse = func(depth int) (string, error) {
		var inner []string
		key := ""
		for {
			tok, err := dec.Token()
			if err != nil {
				return "", err
			}
			switch tk := tok.(type) {
			case xml.StartElement:
				if tk.Name.Local == "key" {
					if err := dec.DecodeElement(&key, &tk); err != nil {
						return "", err
					}
					continue
				}
				v, err := readValue(tk, depth)
				if err != nil {
					return "", err
				}
				if depth == 0 {
					top[key] = v
				} else {
					inner = append(inner, key+":"+v)
				}
			case xml.EndElement:
				if tk.Name.Local == "dict" {
					return "{" + strings.Join(inner, ",") + "}", nil
				}
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			t.Fatal("plist has no <dict>")
		}
		if err != nil {
			t.Fatalf("plist is not valid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "dict" {
			if _, err := parse(0); err != nil {
				t.Fatalf("plist: %v", err)
			}
			return top
		}
	}
}

func TestLaunchdPlist(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		args    string
		logPath string
	}{
		{"agent", Options{User: true, Executable: "/Users/u/bin/medalliond", Home: "/Users/u"},
			"/Users/u/bin/medalliond run --log-file /Users/u/Library/Logs/medalliond.log", "/Users/u/Library/Logs/medalliond.log"},
		{"agent with config", Options{User: true, Executable: "/opt/homebrew/bin/medalliond", ConfigFile: "/Users/u/m & <c>.hcl", Home: "/Users/u"},
			"/opt/homebrew/bin/medalliond run --config /Users/u/m & <c>.hcl --log-file /Users/u/Library/Logs/medalliond.log", "/Users/u/Library/Logs/medalliond.log"},
		{"system daemon", Options{Executable: "/usr/local/bin/medalliond"},
			"/usr/local/bin/medalliond run --log-file /Library/Logs/medalliond.log", "/Library/Logs/medalliond.log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := plistDict(t, LaunchdPlist(tt.opts))
			want := map[string]string{
				"Label":             LaunchdName,
				"ProgramArguments":  tt.args,
				"RunAtLoad":         "true",
				"KeepAlive":         "{SuccessfulExit:false}",
				"ThrottleInterval":  "5",
				"ProcessType":       "Background",
				"StandardErrorPath": tt.logPath,
			}
			for k, v := range want {
				if d[k] != v {
					t.Errorf("%s = %q, want %q", k, d[k], v)
				}
			}
			if len(d) != len(want) {
				t.Errorf("plist keys = %v, want those of %v", d, want)
			}
		})
	}
}

// TestPackagingAgrees keeps the unit files in packaging/ in step with what
// `medalliond service install` writes for a binary in /usr/local/bin.
func TestPackagingAgrees(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", "packaging", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	exe := "/usr/local/bin/medalliond"
	for _, tt := range []struct {
		file string
		user bool
	}{
		{"medalliond.service", false},
		{"medalliond.user.service", true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			got := directives(t, read(tt.file))
			want := directives(t, SystemdUnit(Options{User: tt.user, Executable: exe}))
			for _, k := range []string{"Install.WantedBy", "Service.Restart", "Service.RestartSec"} {
				if one(t, got, k) != one(t, want, k) {
					t.Errorf("%s: %s = %q, the installer writes %q", tt.file, k, got[k], want[k])
				}
			}
			// Beyond the keys above, every directive must match too.
			keys := func(m map[string][]string) []string {
				var ks []string
				for k := range m {
					ks = append(ks, k)
				}
				slices.Sort(ks)
				return ks
			}
			if !slices.Equal(keys(got), keys(want)) {
				t.Errorf("%s has directives %v, the installer writes %v", tt.file, keys(got), keys(want))
			}
			for k, v := range want {
				if !slices.Equal(got[k], v) {
					t.Errorf("%s: %s = %q, the installer writes %q", tt.file, k, got[k], v)
				}
			}
		})
	}
	t.Run("dev.medallion.medalliond.plist", func(t *testing.T) {
		got := plistDict(t, read("dev.medallion.medalliond.plist"))
		want := plistDict(t, LaunchdPlist(Options{User: true, Executable: exe, Home: "/Users/USERNAME"}))
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, the installer writes %q", k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("plist keys = %v, the installer writes %v", got, want)
		}
	})
}

func TestOptionsCheck(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{Executable: "medalliond"}, "not an absolute path"},
		{Options{Executable: "/bin/medalliond", ConfigFile: "c.hcl"}, "not an absolute path"},
		{Options{Executable: "/bin/{{x}}/medalliond"}, `contains "{{"`},
		{Options{Executable: "/bin/medalliond", ConfigFile: "/etc/c.hcl"}, ""},
	}
	for _, tt := range tests {
		err := tt.opts.check()
		if tt.want == "" {
			if err != nil {
				t.Errorf("check(%+v) = %v, want nil", tt.opts, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("check(%+v) = %v, want an error containing %q", tt.opts, err, tt.want)
		}
	}
}

func TestLogHint(t *testing.T) {
	tests := []struct {
		opts Options
		goos string
		want string
	}{
		{Options{User: true}, "linux", "journalctl --user -u medalliond"},
		{Options{}, "linux", "journalctl -u medalliond"},
		{Options{User: true, Home: "/Users/u"}, "darwin", "/Users/u/Library/Logs/medalliond.log"},
	}
	for _, tt := range tests {
		if got := LogHint(tt.opts, tt.goos); !strings.HasSuffix(got, tt.want) {
			t.Errorf("LogHint(%+v, %s) = %q, want …%q", tt.opts, tt.goos, got, tt.want)
		}
	}
}

// TestNoManagerSaysWhatWasFound: a platform kardianos detects but we do not
// install under is named in words a user knows, never as "unix-systemv".
func TestNoManagerSaysWhatWasFound(t *testing.T) {
	tests := []struct{ platform, want string }{
		{"", "systemd is not running here (it is not PID 1"},
		{"unix-systemv", "systemd is not running here (it is not PID 1"},
		{"linux-openrc", "this system runs OpenRC"},
		{"linux-upstart", "this system runs Upstart"},
		{"freebsd", "rc scripts (freebsd)"},
		{"aix-src", "service manager is aix-src"},
	}
	for _, tt := range tests {
		err := noManager(tt.platform)
		if !errors.Is(err, ErrNoServiceManager) {
			t.Errorf("noManager(%q) = %v, does not wrap ErrNoServiceManager", tt.platform, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "unix-systemv") {
			t.Errorf("noManager(%q) = %q, want it to contain %q and not name unix-systemv", tt.platform, msg, tt.want)
		}
	}
}
