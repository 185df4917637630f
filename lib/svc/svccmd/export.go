package svccmd

import (
	"errors"
	"fmt"
	"os/exec"
	"os/user"
	"path/filepath"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/svc/systemd"
)

// ExportArgs are svc export systemd's flags.
type ExportArgs struct {
	File  string // -f; "" finds the project as svc up does
	User  bool   // units for systemctl --user
	Print bool   // print the files instead of writing them
	Dir   string // where the files go (with --print: would go)
	Names []string
}

// ExportSystemd writes (or prints) the project's services as systemd
// units: 0 done, 2 no project or a file wrong, 1 a file not written.
// What the units cannot say as svc does is said on stderr, as in them.
func (v *Verbs) ExportSystemd(a ExportArgs) error {
	f, proj, err := v.load(a.File)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(a.Dir)
	if err != nil {
		return err
	}
	o := systemd.Options{Home: v.Home, Project: proj, User: a.User, Dir: dir, Names: a.Names, LookPath: exec.LookPath}
	if u, err := user.Current(); err == nil && u.Uid != "0" {
		o.RunAs = u.Username
	}
	x, err := systemd.Units(f, o)
	var se *systemd.ServiceError
	switch {
	case errors.As(err, &se):
		return cli.Usagef("%s: %v", f.Path, err)
	case err != nil:
		return cli.Usagef("%v", err)
	}
	for _, n := range x.Notes {
		v.Voice.Notef("%s: %s", n.Service, n.Text)
	}
	if a.Print {
		for i, file := range x.Files {
			if i > 0 {
				fmt.Fprintln(v.Out)
			}
			fmt.Fprintf(v.Out, "### %s (mode %04o)\n", filepath.Join(dir, file.Name), file.Mode)
			v.Out.Write(file.Data)
		}
		return nil
	}
	paths, err := systemd.Write(dir, x.Files)
	for _, p := range paths {
		fmt.Fprintln(v.Out, p)
	}
	if err != nil {
		return cli.Failf("writing the units: %v", err)
	}
	if len(a.Names) == 0 {
		for _, name := range systemd.Stale(dir, proj, x.Files) {
			v.Voice.Notef("%s is left from an earlier export: its service is no longer in %s; disable and remove it, or a link of %s takes it too", filepath.Join(dir, name), f.Path, filepath.Join(dir, "*.service"))
		}
	}
	ctl := "systemctl"
	if a.User {
		ctl += " --user"
	}
	v.Voice.Notef("to run them: %s && %s enable --now %s", v.installHint(ctl, dir, a.User), ctl, x.Target)
	return nil
}

// installHint is how the units in dir reach the manager: a reload in a
// directory it reads, else systemctl link, which reloads.
func (v *Verbs) installHint(ctl, dir string, userUnits bool) string {
	std := "/etc/systemd/system"
	if userUnits {
		std = filepath.Join(v.Getenv("HOME"), ".config/systemd/user")
		if c := v.Getenv("XDG_CONFIG_HOME"); c != "" {
			std = filepath.Join(c, "systemd/user")
		}
	}
	if dir == std {
		return ctl + " daemon-reload"
	}
	return ctl + " link " + filepath.Join(dir, "*.service") + " " + filepath.Join(dir, "*.target")
}
