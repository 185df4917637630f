package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
)

// Size is a byte count given on the command line as 1048576, 64KiB, 64MiB,
// 1GiB, or with the SI suffixes kB, MB, GB (powers of 1000); K, M and G alone
// are binary, as in most tools.
type Size int64

// ParseSize reads a Size.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q: want a number of bytes such as 65536 or 64MiB", s)
	}
	var mult int64
	switch strings.ToLower(unit) {
	case "", "b":
		mult = 1
	case "k", "kib":
		mult = 1 << 10
	case "m", "mib":
		mult = 1 << 20
	case "g", "gib":
		mult = 1 << 30
	case "kb":
		mult = 1000
	case "mb":
		mult = 1000 * 1000
	case "gb":
		mult = 1000 * 1000 * 1000
	default:
		return 0, fmt.Errorf("bad size %q: unknown unit %q (use KiB, MiB, GiB, kB, MB or GB)", s, unit)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return Size(n * mult), nil
}

// Decode lets kong read a Size flag.
func (s *Size) Decode(ctx *kong.DecodeContext) error {
	var text string
	if err := ctx.Scan.PopValueInto("size", &text); err != nil {
		return err
	}
	v, err := ParseSize(text)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// String prints a Size the way ParseSize reads it, in the largest binary
// unit that divides it.
func (s Size) String() string {
	switch n := int64(s); {
	case n != 0 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	default:
		return strconv.FormatInt(n, 10)
	}
}
