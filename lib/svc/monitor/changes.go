package monitor

// watchChanges starts watching the files of Spec.Watch and, with
// Spec.Cascade, the services depended on.
func (m *monitor) watchChanges() {}
