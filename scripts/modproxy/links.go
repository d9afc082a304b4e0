package main

// modproxy links: every relative link of the Markdown files must name a
// file or directory that exists.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// codeSpan matches inline code, whose brackets are not links; mdLink
// matches a Markdown link and captures its target.
var (
	codeSpan = regexp.MustCompile("`[^`]*`")
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// linksCommand runs modproxy links: it fails unless every relative link of
// the Markdown files given names a file or directory that exists.
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
