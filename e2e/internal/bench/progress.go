package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress is a one-line progress bar on a terminal; elsewhere (a log file, CI) it prints a line every
// few seconds instead.
type progress struct {
	w     io.Writer
	tty   bool
	label string
	total int
	start time.Time

	mu    sync.Mutex
	n     int
	shown time.Time
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, label string, total int) *progress {
	return &progress{w: w, tty: isTerminal(w), label: label, total: total, start: time.Now()}
}

func (p *progress) set(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = n
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if time.Since(p.shown) < every && n < p.total {
		return
	}
	p.shown = time.Now()
	p.draw(false)
}

func (p *progress) draw(final bool) {
	const width = 30
	frac := 0.0
	if p.total > 0 {
		frac = min(1, float64(p.n)/float64(p.total))
	}
	full := int(frac * width)
	bar := strings.Repeat("#", full) + strings.Repeat("-", width-full)
	line := fmt.Sprintf("%-40s [%s] %d/%d %5.1fs", p.label, bar, p.n, p.total, time.Since(p.start).Seconds())
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r%s\n", line)
	case p.tty:
		fmt.Fprintf(p.w, "\r%s", line)
	default:
		fmt.Fprintln(p.w, line)
	}
}

// done draws the final state.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(true)
}
