package redisdriver

import (
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// pinnedScripts is every script's SHA-1 as the layout version "2" runs
// it. Nodes of two versions share a keyspace during a rolling deploy, the
// old scripts beside the new: a script changes here only if the data it
// reads and writes keeps its shape; a change of that shape needs a new
// layout version (LayoutVersion), under which old and new nodes do not
// share a keyspace.
var pinnedScripts = map[string]string{
	"bulk":            "b8bac7604bf5711d2a65223a359f0d48ef575c4d",
	"bulk cancel":     "c5db2873a88e12f162ff38bb97a46db956f0a85e",
	"cancel":          "4ccb1fd43cb3712b17e6ac16c46db2d15eaba6ea",
	"claim":           "4f532845a28920af6d2da13f411e657dde54efac",
	"complete":        "d1c2f0922aed904a1b585409c458ef71af4045e4",
	"counts":          "0b9b7a2462bebd97b84d2578756471364adf94cf",
	"delete":          "90e329502a398e64fe2729819ef3145fc5b24023",
	"expired":         "7613031de4c1113c0c8a60884f17ef44471b0f12",
	"extend":          "0dcf80cb5d02c7922e1ea967b1443f1515b77bb5",
	"fail":            "438fc3fcc0d11797c2e45309eb69d0953ec3a1e0",
	"forget":          "5c00d08e27c7136024a30bfa333c1fc67d40125b",
	"get":             "4cb7a9c21d940ee4d478c85065d597be6b47f263",
	"layout":          "f4813267f7be115936d517ede1868d736adaed4b",
	"members":         "59046858ec4da1225a11f98c3c08f724e031d8b5",
	"move":            "f5c6b80ea69fa38f1c1a929d8117e75c8ed01719",
	"page":            "009b2dc32b8167c69d9e8ae19c3ecd5dcf085725",
	"pause":           "c8704c01c57c04e8199ef674257dd43d51893698",
	"periodic claim":  "4f3e76e8a396688d587c8008cf19b67121402198",
	"periodic cursor": "452cb964549e305a70389adc6311d6f62d631ae0",
	"periodic run":    "50a1a26760c4246d2279f653ac384dc92f393aca",
	"reap":            "342dcece0054ddd32a1e84c851253c3c710a7f45",
	"records":         "f3c05b8600c6020bf9b3249faeb7c1a695049bc5",
	"release":         "856a5a90856c095209bc61e688f9bf580928ea35",
	"remove done":     "5d0e15a03af9447e933c1889bf0091cf02feae40",
	"resume":          "41aeec18627f12dd33c885bf753004a15efef09e",
	"retry":           "7f83e6bdae748c8ed85aa53e318567ff16155fef",
	"schedule":        "54ef0a198afe9996c134616b9822e340b0b54fac",
	"schedule many":   "fded4e2285e9fc23b75cd9021ff9718aa9d5ef8a",
}

func TestEveryScriptKeepsItsPinnedSHA1(t *testing.T) {
	if LayoutVersion != "2" {
		t.Fatalf("the layout version is %q: pin the scripts of the new version here", LayoutVersion)
	}
	got := ScriptNames()
	if len(got) != len(pinnedScripts) {
		t.Errorf("%d scripts, %d pinned: pin the new one", len(got), len(pinnedScripts))
	}
	for sha, name := range got {
		if pinnedScripts[name] != sha {
			t.Errorf("script %q has SHA-1 %s, pinned %s: pin a script whose data keeps its shape anew; a change of the data's shape needs a new layout version", name, sha, pinnedScripts[name])
		}
	}
}

// TestEveryScriptIsNamedAndEveryFileUsed: every script of scripts.go has
// a name (so Observer.RedisCall never reports one as "script"), and every
// file of lua/ is part of some script.
func TestEveryScriptIsNamedAndEveryFileUsed(t *testing.T) {
	src, err := os.ReadFile("scripts.go")
	if err != nil {
		t.Fatal(err)
	}
	made := regexp.MustCompile(`(?m)^var \w+ = script\(([^)]*)\)`).FindAllStringSubmatch(string(src), -1)
	if len(made) != len(scriptNames) {
		t.Errorf("scripts.go makes %d scripts, scriptNames names %d: name the new one", len(made), len(scriptNames))
	}
	used := map[string]bool{}
	for _, m := range made {
		for _, f := range strings.Split(m[1], ",") {
			used[strings.Trim(strings.TrimSpace(f), `"`)] = true
		}
	}
	err = fs.WalkDir(luaFiles, "lua", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !used[strings.TrimPrefix(path, "lua/")] {
			t.Errorf("%s is part of no script", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
