package main

// The module zip: which files of a module directory go into it, and
// writing it within the go command's limits.

import (
	"archive/zip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits of a module zip, as the go command checks them (golang.org/x/mod/zip).
const (
	maxZipFile = 500 << 20 // all files, uncompressed
	maxGoMod   = 16 << 20
	maxLicense = 16 << 20
)

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
