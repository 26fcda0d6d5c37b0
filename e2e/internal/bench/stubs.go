package bench

import (
	"context"
	"errors"
)

func runScale(ctx context.Context, r *Runner) error    { return errors.New("not built yet") }
func runAblation(ctx context.Context, r *Runner) error { return errors.New("not built yet") }
