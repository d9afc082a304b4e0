package main

// modproxy packages: the directory of every package of a module.

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// packagesCommand runs modproxy packages: it prints the directory of every
// package of the module, one a line.
func packagesCommand(args []string) error {
	if len(args) != 1 {
		return errors.New("modproxy: packages: one module directory is required")
	}
	dirs, err := packageDirs(args[0])
	if err != nil {
		return fmt.Errorf("modproxy: packages: %w", err)
	}
	for _, d := range dirs {
		fmt.Println(d)
	}
	return nil
}

// packageDirs returns the directories, under dir, of the module's packages:
// those holding a .go file that is not a test, outside testdata and the
// directories the go command ignores (names starting with '.' or '_').
func packageDirs(dir string) ([]string, error) {
	files, err := moduleFiles(dir)
	if err != nil {
		return nil, err
	}
	var dirs []string
	seen := make(map[string]bool)
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || ignoredByGo(f) {
			continue
		}
		d := path.Dir(f)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, filepath.Join(dir, filepath.FromSlash(d)))
		}
	}
	return dirs, nil
}

// ignoredByGo reports whether the go command ignores the file at the
// slash-separated path p for packages: it is in a testdata directory, or
// one of its elements starts with '.' or '_'.
func ignoredByGo(p string) bool {
	for _, elem := range strings.Split(p, "/") {
		if elem == "testdata" || strings.HasPrefix(elem, ".") || strings.HasPrefix(elem, "_") {
			return true
		}
	}
	return false
}
