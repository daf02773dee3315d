package main

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// repoFS is the in-memory file system with every path outside repoRoot refused: the load
// restrictor rooted at the repository root (bases such as ../../bases/web work; ../../../etc
// does not). The first refused path is kept for the error message.
type repoFS struct {
	inner     filesys.FileSystem
	violation string
}

var _ filesys.FileSystem = (*repoFS)(nil)

func inside(p string) bool {
	return p == repoRoot || strings.HasPrefix(p, repoRoot+"/")
}

// check cleans p (relative paths are relative to "/", as in kyaml's in-memory file system)
// and refuses it when it leaves the repository.
func (f *repoFS) check(p string) (string, error) {
	clean := path.Clean("/" + filepath.ToSlash(p))
	if inside(clean) {
		return clean, nil
	}
	r, err := filepath.Rel(repoRoot, clean)
	if err != nil {
		r = clean
	}
	msg := fmt.Sprintf("path %q is outside the repository", r)
	if f.violation == "" {
		f.violation = msg
	}
	return "", fmt.Errorf("%s", msg)
}

func (f *repoFS) Create(p string) (filesys.File, error) {
	c, err := f.check(p)
	if err != nil {
		return nil, err
	}
	return f.inner.Create(c)
}

func (f *repoFS) Mkdir(p string) error {
	c, err := f.check(p)
	if err != nil {
		return err
	}
	return f.inner.Mkdir(c)
}

func (f *repoFS) MkdirAll(p string) error {
	c, err := f.check(p)
	if err != nil {
		return err
	}
	return f.inner.MkdirAll(c)
}

func (f *repoFS) RemoveAll(p string) error {
	c, err := f.check(p)
	if err != nil {
		return err
	}
	return f.inner.RemoveAll(c)
}

func (f *repoFS) Open(p string) (filesys.File, error) {
	c, err := f.check(p)
	if err != nil {
		return nil, err
	}
	return f.inner.Open(c)
}

func (f *repoFS) IsDir(p string) bool {
	c, err := f.check(p)
	return err == nil && f.inner.IsDir(c)
}

func (f *repoFS) ReadDir(p string) ([]string, error) {
	c, err := f.check(p)
	if err != nil {
		return nil, err
	}
	return f.inner.ReadDir(c)
}

func (f *repoFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	c, err := f.check(p)
	if err != nil {
		return "", "", err
	}
	return f.inner.CleanedAbs(c)
}

func (f *repoFS) Exists(p string) bool {
	c, err := f.check(p)
	return err == nil && f.inner.Exists(c)
}

func (f *repoFS) Glob(pattern string) ([]string, error) {
	if _, err := f.check(path.Dir(pattern)); err != nil {
		return nil, err
	}
	all, err := f.inner.Glob(pattern)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, m := range all {
		if inside(path.Clean(m)) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (f *repoFS) ReadFile(p string) ([]byte, error) {
	c, err := f.check(p)
	if err != nil {
		return nil, err
	}
	return f.inner.ReadFile(c)
}

func (f *repoFS) WriteFile(p string, data []byte) error {
	c, err := f.check(p)
	if err != nil {
		return err
	}
	return f.inner.WriteFile(c, data)
}

func (f *repoFS) Walk(p string, fn filepath.WalkFunc) error {
	c, err := f.check(p)
	if err != nil {
		return err
	}
	return f.inner.Walk(c, fn)
}
