package sockdiag

import (
	"io"
	"net"
	"os"
	"testing"
)

// The bytes a process's sockets received grow as a peer sends, and only
// then.
func TestBytesReceived(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			served <- c
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-served
	defer s.Close()
	before, ok := BytesReceived([]int{os.Getpid()})
	if !ok {
		t.Skip("sock_diag with tcp_info is not available here")
	}
	msg := make([]byte, 5000)
	if _, err := s.Write(msg); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, msg); err != nil {
		t.Fatal(err)
	}
	after, _ := BytesReceived([]int{os.Getpid()})
	// This process holds both ends: the client's end received 5000 bytes,
	// the server's none.
	if after-before != 5000 {
		t.Errorf("received %d bytes, want 5000 (before %d, after %d)", after-before, before, after)
	}
	again, _ := BytesReceived([]int{os.Getpid()})
	if again != after {
		t.Errorf("nothing was sent, yet the count moved from %d to %d", after, again)
	}
}
