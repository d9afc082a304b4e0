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
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

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

// Limits of a module zip, as the go command checks them (golang.org/x/mod/zip).
const (
	maxZipFile = 500 << 20 // all files, uncompressed
	maxGoMod   = 16 << 20
	maxLicense = 16 << 20
)

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

// moduleFiles lists the files of the module rooted at dir as the go command
// puts them in a module zip: slash-separated paths relative to dir, without
// version-control directories, vendor directories, the directories of
// nested modules (a directory below dir with its own go.mod) and anything
// that is not a regular file.
func moduleFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p == dir {
				return nil
			}
			switch d.Name() {
			case ".git", ".hg", ".svn", ".bzr", "vendor":
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		files = append(files, rel)
		return nil
	})
	return files, err
}

// writeZip writes the module zip of dir to out, every file under prefix/
// (module@version/).
func writeZip(out, dir, prefix string) error {
	files, err := moduleFiles(dir)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	var total int64
	seen := make(map[string]string) // lower-cased path -> path: names must differ by more than case
	for _, name := range files {
		if other, dup := seen[strings.ToLower(name)]; dup {
			return fmt.Errorf("files %s and %s differ only in case", other, name)
		}
		seen[strings.ToLower(name)] = name
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		if name == "LICENSE" && st.Size() > maxLicense {
			return fmt.Errorf("LICENSE is larger than %d bytes", maxLicense)
		}
		total += st.Size()
		if total > maxZipFile {
			return fmt.Errorf("the module's files are larger than %d bytes", maxZipFile)
		}
		w, err := zw.Create(path.Join(prefix, name))
		if err != nil {
			return err
		}
		src, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		_, err = io.Copy(w, src)
		src.Close()
		if err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func snippetsCommand(args []string) error {
	flags := flag.NewFlagSet("snippets", flag.ContinueOnError)
	readme := flags.String("readme", "README.md", "the Markdown file whose ```go blocks are checked")
	if err := flags.Parse(args); err != nil {
		return err
	}
	md, err := os.ReadFile(*readme)
	if err != nil {
		return fmt.Errorf("modproxy: snippets: %w", err)
	}
	var sources [][]string
	for _, name := range flags.Args() {
		src, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("modproxy: snippets: %w", err)
		}
		sources = append(sources, codeLines(string(src)))
	}
	blocks := goBlocks(string(md))
	for i, block := range blocks {
		lines := codeLines(block)
		found := false
		for j, src := range sources {
			if containsLines(src, lines) {
				fmt.Printf("%s: go block %d (%d lines) is in %s\n", *readme, i+1, len(lines), flags.Arg(j))
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("modproxy: snippets: %s: go block %d, starting %q, is in none of %v: copy it from a compiled Example",
				*readme, i+1, firstLine(lines), flags.Args())
		}
	}
	if len(blocks) == 0 {
		return fmt.Errorf("modproxy: snippets: %s: no go block", *readme)
	}
	return nil
}

// goBlocks returns the contents of the ```go fenced blocks of a Markdown
// text.
func goBlocks(md string) []string {
	var blocks []string
	var cur []string
	in := false
	for line := range strings.Lines(md) {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```go":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, ""))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// codeLines returns the non-blank lines of code, each without its
// indentation, so that a snippet matches its Example however deeply the
// Example indents it.
func codeLines(code string) []string {
	var lines []string
	for line := range strings.Lines(code) {
		if t := strings.TrimSpace(line); t != "" {
			lines = append(lines, t)
		}
	}
	return lines
}

// containsLines reports whether part is a run of consecutive lines of all.
func containsLines(all, part []string) bool {
	if len(part) == 0 {
		return false
	}
	for i := 0; i+len(part) <= len(all); i++ {
		match := true
		for j := range part {
			if all[i+j] != part[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func firstLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

func mainCommand(args []string) error {
	flags := flag.NewFlagSet("main", flag.ContinueOnError)
	fn := flags.String("func", "", "the example function whose body becomes main")
	out := flags.String("out", "", "the file to write")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *fn == "" || *out == "" || flags.NArg() != 1 {
		return errors.New("modproxy: main: -func, -out and one source file are required")
	}
	src, err := mainFromExample(flags.Arg(0), *fn)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, src, 0o644)
}

// mainFromExample returns a main package whose main function is the body of
// the function fn in the Go file name, importing only the packages the body
// names. An import's name is taken to be its alias or else the last element
// of its path, which holds for the standard library and this repository's
// packages, the only ones the README's quick start uses.
func mainFromExample(name, fn string) ([]byte, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("modproxy: main: %w", err)
	}
	var body *ast.BlockStmt
	for _, decl := range file.Decls {
		if f, ok := decl.(*ast.FuncDecl); ok && f.Name.Name == fn && f.Recv == nil {
			body = f.Body
		}
	}
	if body == nil {
		return nil, fmt.Errorf("modproxy: main: %s: no function %s", name, fn)
	}
	used := make(map[string]bool) // package names the body selects from
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var b bytes.Buffer
	b.WriteString("// Code generated by modproxy main from " + filepath.Base(name) + "'s " + fn + ". DO NOT EDIT.\n\npackage main\n\nimport (\n")
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		pkg := path.Base(p)
		if imp.Name != nil {
			pkg = imp.Name.Name
		}
		if !used[pkg] {
			continue
		}
		b.WriteString("\t")
		if imp.Name != nil {
			b.WriteString(imp.Name.Name + " ")
		}
		b.WriteString(imp.Path.Value + "\n")
	}
	b.WriteString(")\n\nfunc main() ")
	bodySrc, err := nodeSource(fset, &printer.CommentedNode{Node: body, Comments: file.Comments})
	if err != nil {
		return nil, err
	}
	b.WriteString(bodySrc + "\n")
	formatted, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("modproxy: main: %s: %w", fn, err)
	}
	return formatted, nil
}

func nodeSource(fset *token.FileSet, n any) (string, error) {
	var b bytes.Buffer
	if err := format.Node(&b, fset, n); err != nil {
		return "", err
	}
	return b.String(), nil
}

var (
	codeSpan = regexp.MustCompile("`[^`]*`")
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

func linksCommand(files []string) error {
	if len(files) == 0 {
		return errors.New("modproxy: links: no Markdown file given")
	}
	var broken []string
	n := 0
	for _, name := range files {
		md, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("modproxy: links: %w", err)
		}
		for _, target := range relativeLinks(string(md)) {
			n++
			p := filepath.Join(filepath.Dir(name), filepath.FromSlash(target))
			if _, err := os.Stat(p); err != nil {
				broken = append(broken, fmt.Sprintf("%s: %s", name, target))
			}
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("modproxy: links: %d of %d relative links name nothing:\n\t%s", len(broken), n, strings.Join(broken, "\n\t"))
	}
	fmt.Printf("%d relative links in %d files, all resolve\n", n, len(files))
	return nil
}

// relativeLinks returns the targets of the Markdown links of md that are
// neither absolute URLs nor anchors on the same page, without their
// anchors. Links in code (fenced blocks and inline code) are not links.
func relativeLinks(md string) []string {
	var targets []string
	inFence := false
	for line := range strings.Lines(md) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			targets = append(targets, target)
		}
	}
	return targets
}

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
