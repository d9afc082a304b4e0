package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeTree creates the files (slash-separated path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestModuleFilesLeaveOutNestedModulesVersionControlAndVendor(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":                "module example.com/m\n",
		"a.go":                  "package m\n",
		"sub/b.go":              "package sub\n",
		"testdata/x.txt":        "kept\n",
		"nested/go.mod":         "module example.com/m/nested\n",
		"nested/c.go":           "package nested\n",
		"nested/deeper/d.go":    "package deeper\n",
		".git/config":           "[core]\n",
		"vendor/modules.txt":    "# vendored\n",
		"sub/.hg/store/x.i":     "hg\n",
		"examples/tour/main.go": "package main\n",
	})
	got, err := moduleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"a.go", "examples/tour/main.go", "go.mod", "sub/b.go", "testdata/x.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("moduleFiles = %q, want %q", got, want)
	}
}

func TestPublishWritesTheProxyProtocolFiles(t *testing.T) {
	dir, proxy := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{
		"go.mod":         "module example.com/Owner/m\n\ngo 1.25\n",
		"m.go":           "package m\n",
		"inner/go.mod":   "module example.com/Owner/m/inner\n",
		"inner/inner.go": "package inner\n",
	})
	when := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	modPath, err := publish(proxy, dir, "v0.1.0", when)
	if err != nil {
		t.Fatal(err)
	}
	if modPath != "example.com/Owner/m" {
		t.Errorf("module path = %q", modPath)
	}
	vdir := filepath.Join(proxy, "example.com", "!owner", "m", "@v") // upper case escaped
	list, err := os.ReadFile(filepath.Join(vdir, "list"))
	if err != nil || string(list) != "v0.1.0\n" {
		t.Errorf("list = %q, %v; want \"v0.1.0\\n\"", list, err)
	}
	var info struct {
		Version string
		Time    time.Time
	}
	raw, err := os.ReadFile(filepath.Join(vdir, "v0.1.0.info"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &info); err != nil || info.Version != "v0.1.0" || !info.Time.Equal(when) {
		t.Errorf("info = %s (%v), want version v0.1.0 at %v", raw, err, when)
	}
	mod, err := os.ReadFile(filepath.Join(vdir, "v0.1.0.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module example.com/Owner/m\n") {
		t.Errorf(".mod = %q, %v", mod, err)
	}
	zr, err := zip.OpenReader(filepath.Join(vdir, "v0.1.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	want := []string{"example.com/Owner/m@v0.1.0/go.mod", "example.com/Owner/m@v0.1.0/m.go"}
	if !slices.Equal(names, want) {
		t.Errorf("zip holds %q, want %q (the nested module left out)", names, want)
	}
}

func TestPublishRejectsADirectoryWithoutGoMod(t *testing.T) {
	if _, err := publish(t.TempDir(), t.TempDir(), "v0.1.0", time.Now()); err == nil {
		t.Error("publish of a directory without go.mod succeeded")
	}
}

func TestEscapePathEncodesUpperCaseAndRejectsBang(t *testing.T) {
	got, err := escapePath("github.com/BurntSushi/toml")
	if err != nil || got != "github.com/!burnt!sushi/toml" {
		t.Errorf("escapePath = %q, %v", got, err)
	}
	if _, err := escapePath("example.com/a!b"); err == nil {
		t.Error("escapePath accepted '!'")
	}
}

func TestEveryGoBlockMustBeConsecutiveLinesOfASource(t *testing.T) {
	md := "text\n```go\nx := 1\n\n    y := x\n```\n```sh\nnot go\n```\n```go\nz := 3\n```\n"
	blocks := goBlocks(md)
	if len(blocks) != 2 {
		t.Fatalf("goBlocks found %d blocks, want 2: %q", len(blocks), blocks)
	}
	src := codeLines("func Example() {\n\tx := 1\n\ty := x\n\tz := 3\n}\n")
	if !containsLines(src, codeLines(blocks[0])) {
		t.Error("block 1 (indented differently, a blank line more) not found in the source")
	}
	if containsLines(src, codeLines("x := 1\nz := 3\n")) {
		t.Error("lines that are not consecutive in the source were found")
	}
	if containsLines(src, nil) {
		t.Error("an empty block was found")
	}
}

func TestRelativeLinksSkipsURLsAnchorsAndCode(t *testing.T) {
	md := strings.Join([]string{
		"See [docs](docs/a.md#part), [the site](https://example.com/x) and [here](#top).",
		"[`pkg/`](pkg) and `InvokeAll[T](ctx, s, fns)` and `[x](in-code.md)`",
		"```go",
		"f := m[k](arg)",
		"```",
	}, "\n")
	got := relativeLinks(md)
	want := []string{"docs/a.md", "pkg"}
	if !slices.Equal(got, want) {
		t.Errorf("relativeLinks = %q, want %q", got, want)
	}
}

func TestMainFromExampleKeepsOnlyTheImportsTheBodyUses(t *testing.T) {
	dir := t.TempDir()
	src := `package x_test

import (
	"errors"
	"fmt"
	str "strings"
)

func Example_other() { fmt.Println(errors.New("no")) }

func Example_quickStart() {
	// A comment that stays.
	fmt.Println(str.ToUpper("hi"))
}
`
	name := filepath.Join(dir, "example_test.go")
	writeTree(t, dir, map[string]string{"example_test.go": src})
	out, err := mainFromExample(name, "Example_quickStart")
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"package main", `"fmt"`, `str "strings"`, "func main() {", "// A comment that stays.", "str.ToUpper"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"errors"`) {
		t.Errorf("output imports errors, which main does not use:\n%s", got)
	}
	if _, err := mainFromExample(name, "Example_missing"); err == nil {
		t.Error("a missing function was not an error")
	}
}
