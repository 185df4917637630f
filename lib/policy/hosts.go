package policy

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// hostIP reads a host name as an IP address the way curl, browsers and
// getaddrinfo do: inet_aton's forms (a.b.c.d, a.b.c, a.b, a, each part
// decimal, 0x hex or 0 octal) and IPv6, an IPv4-mapped one read as its
// IPv4 address.
func hostIP(name string) (netip.Addr, bool) {
	if a, ok := inetAton(name); ok {
		return a, true
	}
	a, err := netip.ParseAddr(strings.Trim(name, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// inetAton reads s as inet_aton(3) does (and the WHATWG URL standard,
// which also reads 0x alone as 0).
func inetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
			if p == "" {
				p = "0" // 0x alone: 0, as browsers read it
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" || strings.ContainsAny(p, "+-_") {
			return netip.Addr{}, false
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	// every part but the last is a byte; the last fills the rest
	var n uint64
	for _, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n = n<<8 | v
	}
	rest := uint(8 * (4 - len(vals) + 1))
	last := vals[len(vals)-1]
	if last >= 1<<rest {
		return netip.Addr{}, false
	}
	n = n<<rest | last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// nat64 is the well-known prefix of NAT64 (RFC 6052): its addresses
// reach the IPv4 address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// carriedIPs are the IP addresses a host name carries besides itself,
// which wildcard DNS (nip.io, sslip.io and their like) resolves it to,
// or a NAT64 address reaches: four labels in a row that are decimal
// bytes (10.0.0.1.nip.io, app.10.0.0.1.nip.io), a label with four such
// numbers joined by dashes in it (app-10-0-0-1.sslip.io), a label of
// eight hex digits (0a000001.nip.io) and a label that is an IPv6 address
// with dashes for colons (fd00--1.sslip.io).
//
// The unspecified address (0.0.0.0, ::) carries the loopback one, which
// connecting to it reaches, and localhost and *.localhost carry both
// loopback addresses (RFC 6761).
func carriedIPs(name string, ip netip.Addr, isIP bool) []netip.Addr {
	if isIP {
		switch {
		case ip.Is6() && nat64.Contains(ip):
			b := ip.As16()
			return []netip.Addr{netip.AddrFrom4([4]byte(b[12:]))}
		case ip.IsUnspecified() && ip.Is4():
			return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
		case ip.IsUnspecified():
			return []netip.Addr{netip.IPv6Loopback()}
		}
		return nil
	}
	var out []netip.Addr
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		out = append(out, netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback())
	}
	labels := strings.Split(name, ".")
	for i := 0; i+4 <= len(labels); i++ {
		if a, ok := dottedBytes(labels[i : i+4]); ok {
			out = append(out, a)
		}
	}
	for _, l := range labels {
		ds := strings.Split(l, "-")
		for i := 0; i+4 <= len(ds); i++ {
			if a, ok := dottedBytes(ds[i : i+4]); ok {
				out = append(out, a)
			}
		}
		if len(l) == 8 {
			if v, err := strconv.ParseUint(l, 16, 32); err == nil {
				out = append(out, netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}))
			}
		}
		if strings.Contains(l, "-") {
			if a, err := netip.ParseAddr(strings.ReplaceAll(l, "-", ":")); err == nil && a.Is6() {
				out = append(out, a.Unmap())
			}
		}
	}
	return out
}

// dottedBytes reads four decimal bytes as an IPv4 address.
func dottedBytes(ps []string) (netip.Addr, bool) {
	var b [4]byte
	for i, p := range ps {
		v, err := strconv.ParseUint(p, 10, 8)
		if err != nil || p == "" || (len(p) > 1 && p[0] == '0') {
			return netip.Addr{}, false
		}
		b[i] = byte(v)
	}
	return netip.AddrFrom4(b), true
}

// hostPattern checks a host pattern: a host name, * for any run of
// characters in it; an IP address in any form hostIP reads, kept as its
// usual form; or a CIDR prefix (10.0.0.0/8, fd00::/8).
func hostPattern(text string) (string, netip.Prefix, error) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(text), "."))
	if strings.Contains(h, "/") && !strings.Contains(h, "://") {
		pf, err := netip.ParsePrefix(h)
		if err != nil {
			return "", netip.Prefix{}, errors.New("a host name, an IP address or a CIDR prefix (10.0.0.0/8), not a URL or path")
		}
		if pf.Addr().Is4In6() && pf.Bits() >= 96 {
			pf = netip.PrefixFrom(pf.Addr().Unmap(), pf.Bits()-96)
		}
		pf = pf.Masked()
		return pf.String(), pf, nil
	}
	if !strings.Contains(h, "*") {
		if a, ok := hostIP(h); ok {
			return a.String(), netip.Prefix{}, nil
		}
	}
	switch {
	case h == "":
		return "", netip.Prefix{}, errors.New("an empty pattern matches no host")
	case strings.Contains(h, "://") || strings.Contains(h, "/"):
		return "", netip.Prefix{}, errors.New("a host name, not a URL: write example.com or *.example.com")
	case strings.Contains(h, ":"):
		return "", netip.Prefix{}, errors.New("a host name alone: ports are not matched")
	case strings.ContainsAny(h, " \t?[]"):
		return "", netip.Prefix{}, errors.New("a host name, with * as its only wildcard")
	}
	return h, netip.Prefix{}, nil
}

// matchHost tells whether a host rule matches a host named name (an IP
// address in its usual form when it is one).
func (r rule) matchHost(name string, ip netip.Addr, isIP bool) bool {
	if r.prefix.IsValid() {
		return isIP && r.prefix.Contains(ip)
	}
	return matchText(r.pat, name, false)
}

// checkHost matches a host, or a URL's host; one agentry cannot tell is
// matched as what it could be. A host that is an IP address however
// spelt is matched as its usual form; the IP addresses a name carries
// (carriedIPs) are matched too, by the ask and deny rules that are not
// defaults, the stricter verdict winning.
func checkHost(rules []rule, h string) Decision {
	name := hostOf(h)
	ip, isIP := hostIP(name)
	shown := name
	if name != "" && isIP {
		if s := ip.String(); s != name {
			shown = name + " (" + s + ")"
		}
		name = ip.String()
	}
	var d Decision
	for _, r := range rules {
		if r.dflt || r.verdict <= d.Verdict {
			continue
		}
		if (name != "" && r.matchHost(name, ip, isIP)) || (name == "" && r.verdict >= Ask) {
			d = Decision{Verdict: r.verdict, Rule: r.String(), Match: h}
			if name != "" {
				d.Match = shown
			}
		}
	}
	if d.Verdict == None {
		d = defaultOf(rules, h)
		if name != "" && d.Verdict != None {
			d.Match = shown
		}
	}
	if name == "" {
		return d
	}
	for _, a := range carriedIPs(name, ip, isIP) {
		for _, r := range rules {
			if !r.dflt && r.verdict >= Ask && r.verdict > d.Verdict && r.matchHost(a.String(), a, true) {
				d = Decision{Verdict: r.verdict, Rule: r.String(), Match: shown + " (" + a.String() + ")"}
			}
		}
	}
	return d
}
