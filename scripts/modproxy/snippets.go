package main

// modproxy snippets: every go block of the README must be part of a
// compiled Example.

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// snippetsCommand runs modproxy snippets: it fails unless every go block
// of the README is, line for line, part of one of the files given.
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

// firstLine returns the first of lines, or "" if there is none.
func firstLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}
