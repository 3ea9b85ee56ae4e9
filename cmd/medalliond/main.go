// Command medalliond is the Medallion daemon: it keeps medallions (versioned
// save files for coding agents) in a Badger store and serves them to
// medallionctl over a Unix socket. See `medalliond --help`.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
