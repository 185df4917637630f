package project

// BlockPorts are the ports svc up gives the services whose port is
// "auto" from the worktree's port_block (reserved here, as svc up
// reserves it), by name, and the block's first port: none and 0 when
// the file reserves no block. svc export fixes them in its units.
func (f *File) BlockPorts(home string) (ports map[string]string, base int, err error) {
	u := &Up{Home: home, File: f}
	ports, err = u.blockPorts()
	return ports, u.block, err
}
