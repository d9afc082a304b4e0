package main

// modproxy publish: each module written into a file-based module proxy as
// the Go module proxy protocol serves it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// publishCommand runs modproxy publish: it writes each module directory
// given into the file proxy (see publish).
func publishCommand(args []string) error {
	flags := flag.NewFlagSet("publish", flag.ContinueOnError)
	proxy := flags.String("proxy", "", "the proxy's root directory")
	version := flags.String("version", "", "the version to publish, e.g. v0.1.0")
	when := flags.String("time", "", "the version's time (RFC 3339), as the tag's commit")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *proxy == "" || *version == "" || flags.NArg() == 0 {
		return errors.New("modproxy: publish: -proxy, -version and at least one module directory are required")
	}
	t, err := time.Parse(time.RFC3339, *when)
	if err != nil {
		return fmt.Errorf("modproxy: publish: -time: %w", err)
	}
	for _, dir := range flags.Args() {
		modPath, err := publish(*proxy, dir, *version, t.UTC())
		if err != nil {
			return err
		}
		fmt.Printf("published %s@%s from %s\n", modPath, *version, dir)
	}
	return nil
}

// publish writes the module rooted at dir into the file proxy at root and
// returns its module path.
func publish(root, dir, version string, t time.Time) (string, error) {
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("modproxy: publish %s: %w", dir, err)
	}
	modPath := modulePath(goMod)
	if modPath == "" {
		return "", fmt.Errorf("modproxy: publish %s: go.mod has no module line", dir)
	}
	if len(goMod) > maxGoMod {
		return "", fmt.Errorf("modproxy: publish %s: go.mod is larger than %d bytes", dir, maxGoMod)
	}
	escaped, err := escapePath(modPath)
	if err != nil {
		return "", err
	}
	vdir := filepath.Join(root, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t})
	if err := os.WriteFile(filepath.Join(vdir, version+".info"), info, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".mod"), goMod, 0o644); err != nil {
		return "", err
	}
	if err := writeZip(filepath.Join(vdir, version+".zip"), dir, modPath+"@"+version); err != nil {
		return "", fmt.Errorf("modproxy: publish %s: %w", dir, err)
	}
	list, err := os.OpenFile(filepath.Join(vdir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	defer list.Close()
	_, err = fmt.Fprintln(list, version)
	return modPath, err
}

// modulePath returns the path on go.mod's module line.
func modulePath(goMod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(goMod))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			p, err := strconv.Unquote(fields[1])
			if err != nil {
				p = fields[1]
			}
			return p
		}
	}
	return ""
}

// escapePath is the module proxy's case encoding: each upper-case letter
// becomes '!' and its lower case.
func escapePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!' || r >= unicode.MaxASCII:
			return "", fmt.Errorf("modproxy: module path %q: character %q not allowed", p, r)
		case unicode.IsUpper(r):
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}
