package bench

import (
	"context"
	"errors"
)

func runAblation(ctx context.Context, r *Runner) error { return errors.New("not built yet") }
