package ready

import (
	"encoding/binary"
	"io"
	"net/netip"
	"time"
)

// conn is a connection with deadlines.
type conn interface {
	io.ReadWriter
	SetDeadline(time.Time) error
}

// tlsAnswers reports whether the server on c answers a TLS ClientHello
// with a TLS record: a ServerHello, or an alert, both of which say a TLS
// server is there and serving. It proves less than a handshake, and costs
// the monitor no TLS library.
func tlsAnswers(c conn, serverName string) bool {
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(clientHello(serverName)); err != nil {
		return false
	}
	var hdr [3]byte // content type, then the record's protocol version
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return false
	}
	return (hdr[0] == 0x16 || hdr[0] == 0x15) && hdr[1] == 0x03
}

// clientHello builds a TLS 1.2/1.3 ClientHello record, with SNI when
// serverName is a name rather than an address.
func clientHello(serverName string) []byte {
	var ext []byte
	if _, err := netip.ParseAddr(serverName); serverName != "" && err != nil {
		name := []byte(serverName)
		sni := u16(len(name) + 3)
		sni = append(sni, 0) // host_name
		sni = append(append(sni, u16(len(name))...), name...)
		ext = extension(ext, 0x0000, sni)
	}
	ext = extension(ext, 0x000a, []byte{0, 6, 0, 0x1d, 0, 0x17, 0, 0x18})     // groups: x25519, P-256, P-384
	ext = extension(ext, 0x000b, []byte{1, 0})                                // point formats: uncompressed
	ext = extension(ext, 0x000d, []byte{0, 10, 4, 3, 8, 4, 4, 1, 5, 3, 8, 7}) // signatures
	ext = extension(ext, 0x002b, []byte{4, 3, 4, 3, 3})                       // versions: 1.3, 1.2
	share := append([]byte{0, 36, 0, 0x1d, 0, 32, 9}, make([]byte, 31)...)    // x25519: the base point
	ext = extension(ext, 0x0033, share)

	suites := []byte{0x13, 0x01, 0x13, 0x02, 0x13, 0x03, 0xc0, 0x2b, 0xc0, 0x2f, 0xc0, 0x2c, 0xc0, 0x30,
		0xcc, 0xa9, 0xcc, 0xa8, 0x00, 0x9c, 0x00, 0x9d, 0x00, 0x2f, 0x00, 0x35}
	body := []byte{3, 3}                     // legacy version: TLS 1.2
	body = append(body, make([]byte, 32)...) // random: the probe has no secret to keep
	body = append(body, 0)                   // no session id
	body = append(append(body, u16(len(suites))...), suites...)
	body = append(body, 1, 0) // compression: none
	body = append(append(body, u16(len(ext))...), ext...)

	hs := append([]byte{1, 0}, u16(len(body))...) // ClientHello, 24-bit length
	hs = append(hs, body...)
	rec := append([]byte{0x16, 3, 1}, u16(len(hs))...)
	return append(rec, hs...)
}

func extension(b []byte, typ uint16, data []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = append(b, u16(len(data))...)
	return append(b, data...)
}

func u16(n int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(n)) }
