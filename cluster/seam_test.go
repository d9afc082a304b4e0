package cluster_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// keyShape matches a string literal that names a key of the Redis
// keyspace, or the part after a prefix: ":pending", ":t:", ":k:" ...
var keyShape = regexp.MustCompile(`^:(pending|lease|dead|done|kinds|paused|t|k|events|layout|nodes|nodekinds|member|members|periodic|membership|tl)(:|$)`)

// keyOrScript matches the Redis driver's names of keys and scripts.
var keyOrScript = regexp.MustCompile(`Script$|^(Keys|Partition|PartitionsOf|OldLayout|KeySlot|SplitHashTag|Source)$`)

// scriptCalls are the go-redis calls that run a script.
var scriptCalls = map[string]bool{"NewScript": true, "Eval": true, "EvalRO": true, "EvalSha": true, "EvalShaRO": true}

// TestNoKeyOrScriptOutsideTheRedisDriver: every key name and every script
// of the store is the Redis driver's (internal/redisdriver); no other
// package of the module (the rules, stpectl, the examples) builds a key or
// runs a script. Tests may read keys through the driver's names.
func TestNoKeyOrScriptOutsideTheRedisDriver(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case filepath.Join("internal", "redisdriver"), "pgdriver", filepath.Join("internal", "redistest"):
				return filepath.SkipDir // the driver itself, another module, the test servers
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && scriptCalls[sel.Sel.Name] {
					t.Errorf("%s: runs a script (%s): scripts are the Redis driver's", fset.Position(n.Pos()), sel.Sel.Name)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "redisdriver" && keyOrScript.MatchString(n.Sel.Name) {
					t.Errorf("%s: uses redisdriver.%s: key names and scripts stay inside the Redis driver", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if s, err := strconv.Unquote(n.Value); err == nil && keyShape.MatchString(s) {
						t.Errorf("%s: builds a key (%q): key names are the Redis driver's", fset.Position(n.Pos()), s)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
