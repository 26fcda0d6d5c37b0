package doccheck

import (
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// Changed returns the files under root (hidden directories such as .git
// left out) written after since: what running a documented example did to
// the checkout, which must be nothing, so that a reader who tries it finds
// git status as clean as before.
func Changed(root string, since time.Time) ([]string, error) {
	var changed []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(since) {
			changed = append(changed, p)
		}
		return nil
	})
	return changed, err
}
