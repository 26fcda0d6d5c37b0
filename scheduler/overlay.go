package scheduler

// podOverlay changes the pods of a state in place and puts them back: the
// independent check of a solve and a preemption plan's passes ask Check
// about the state with the pods placed and the victims gone, and a copy of
// the whole state for that took 56 ms a plan at 15,000 nodes running
// 60,000 pods. Pods put in are the caller's; the state's own pods are never
// changed, only replaced.
type podOverlay struct {
	st    *State
	saved map[string]*Pod // the state's pod of each name changed (nil: none)
}

func newPodOverlay(st *State) *podOverlay {
	return &podOverlay{st: st, saved: map[string]*Pod{}}
}

func (o *podOverlay) save(name string) {
	if _, ok := o.saved[name]; !ok {
		o.saved[name] = o.st.Pods[name]
	}
}

// set puts p in place of the state's pod of its name.
func (o *podOverlay) set(p *Pod) {
	o.save(p.Name)
	o.st.Pods[p.Name] = p
}

// remove takes the pod of that name out of the state.
func (o *podOverlay) remove(name string) {
	o.save(name)
	delete(o.st.Pods, name)
}

// restore puts every pod changed back as it was; the overlay is empty
// after it.
func (o *podOverlay) restore() {
	for name, p := range o.saved {
		if p != nil {
			o.st.Pods[name] = p
		} else {
			delete(o.st.Pods, name)
		}
	}
	clear(o.saved)
}
