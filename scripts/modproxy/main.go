// Command modproxy is the release rehearsal's helper (see
// scripts/release-rehearsal). It knows three jobs, each a subcommand:
//
//	modproxy publish -proxy DIR -version V -time T MODULEDIR...
//	    writes each module as the Go module proxy protocol serves it
//	    (@v/list, V.info, V.mod, V.zip), so that GOPROXY=file://DIR serves
//	    the modules as if V had been tagged and published.
//	modproxy snippets -readme README.md FILE...
//	    fails unless every ```go block of the README is, line for line, a
//	    part of one of the FILEs (compiled Examples), so that the snippets
//	    a user copies are the code the tests compile.
//	modproxy links FILE.md...
//	    fails unless every relative link of the Markdown files names a
//	    file or directory that exists.
//	modproxy packages MODULEDIR
//	    prints the directory of every package of the module (a directory
//	    of its zip holding a Go file that is not a test), one a line.
//	modproxy main -func NAME -out main.go FILE
//	    writes a main package whose main is the body of the example
//	    function NAME in FILE, with the imports it uses.
//
// It uses the standard library only, so it runs before anything is
// downloaded.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("modproxy: usage: modproxy publish|snippets|links|packages|main [flags] [args]"))
	}
	var err error
	switch os.Args[1] {
	case "publish":
		err = publishCommand(os.Args[2:])
	case "snippets":
		err = snippetsCommand(os.Args[2:])
	case "links":
		err = linksCommand(os.Args[2:])
	case "packages":
		err = packagesCommand(os.Args[2:])
	case "main":
		err = mainCommand(os.Args[2:])
	default:
		err = fmt.Errorf("modproxy: subcommand %q: want publish, snippets, links, packages or main", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

// fail prints err and exits with status 1.
func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
