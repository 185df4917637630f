package cli

import (
	"slices"
	"testing"
)

func TestSplitOperands(t *testing.T) {
	for _, c := range []struct {
		args, own []string
		ops       Operands
	}{
		{[]string{"count", "type"}, []string{"count", "type"}, nil},
		{[]string{"count", "type", "--", "a", "-", "--", "-x"}, []string{"count", "type"}, Operands{"a", "-", "--", "-x"}},
		{[]string{"count", "--"}, []string{"count"}, Operands{}},
	} {
		own, ops := splitOperands(c.args)
		if !slices.Equal(own, c.own) || !slices.Equal(ops, c.ops) || (ops == nil) != (c.ops == nil) {
			t.Errorf("splitOperands(%q) = %q, %q", c.args, own, ops)
		}
	}
}
