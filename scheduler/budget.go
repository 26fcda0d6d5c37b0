package scheduler

import (
	"fmt"
	"strings"
)

// PodDisruptionBudgets in a preemption plan (P3): the scheduler writes the
// budget of each victim that has one (Config.DisruptionBudget) into
// victim_budget, and restates the policy over the plan's evictions.

// victimBudgets replaces the rows of victim_budget with the budgets of a
// plan's victims.
func (s *Scheduler) victimBudgets(victims []*Pod) []stmt {
	st := []stmt{{"delete from victim_budget", nil}}
	if s.cfg.DisruptionBudget == nil || s.off["P3"] {
		return st
	}
	for _, v := range victims {
		if b, allowed := s.cfg.DisruptionBudget(v); b != "" {
			st = append(st, stmt{"insert into victim_budget values " + params(3), []any{v.Name, b, allowed}})
		}
	}
	return st
}

// checkBudgets restates P3 over a plan's evictions: at most allowed of one
// budget's pods are evicted.
func (s *Scheduler) checkBudgets(ev []Eviction) error {
	if s.cfg.DisruptionBudget == nil || s.off["P3"] {
		return nil
	}
	type use struct {
		allowed int64
		pods    []string
	}
	uses := map[string]*use{}
	for _, e := range ev {
		p := s.state.Pods[e.Pod]
		if p == nil {
			continue
		}
		b, allowed := s.cfg.DisruptionBudget(p)
		if b == "" {
			continue
		}
		u := uses[b]
		if u == nil {
			u = &use{allowed: allowed}
			uses[b] = u
		}
		u.pods = append(u.pods, e.Pod)
	}
	for _, b := range sortedKeys(uses) {
		if u := uses[b]; int64(len(u.pods)) > u.allowed {
			return fmt.Errorf("%w: P3 PodDisruptionBudget %s allows %d disruptions; the plan evicts %d of its pods (%s)",
				ErrCheck, b, u.allowed, len(u.pods), strings.Join(u.pods, ", "))
		}
	}
	return nil
}
