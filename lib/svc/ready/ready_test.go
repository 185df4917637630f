package ready

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"
)

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func serve(t *testing.T, ln net.Listener) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }),
		ErrorLog: log.New(io.Discard, "", 0)} // the probe hangs up mid-handshake, on purpose
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// --ready-url: an http URL is ready when HTTP answers, an https one when
// TLS does — a port that merely accepts, or answers plain HTTP, is not.
func TestHTTP(t *testing.T) {
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpPort := serve(t, plain)
	cert := selfSigned(t)
	var tlsPorts []string // TLS 1.2 only, 1.3 only, either
	for _, v := range [][2]uint16{{tls.VersionTLS12, tls.VersionTLS12}, {tls.VersionTLS13, tls.VersionTLS13}, {tls.VersionTLS12, tls.VersionTLS13}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: v[0], MaxVersion: v[1]}
		tlsPorts = append(tlsPorts, serve(t, tls.NewListener(ln, cfg)))
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { // accepts, then hangs up without a word
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { silent.Close() })
	_, silentPort, _ := net.SplitHostPort(silent.Addr().String())

	for _, c := range []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:" + httpPort + "/health", true},
		{"https://127.0.0.1:" + tlsPorts[0] + "/", true},
		{"https://127.0.0.1:" + tlsPorts[1] + "/", true},
		{"https://localhost:" + tlsPorts[2] + "/", true},
		{"https://127.0.0.1:" + httpPort + "/", false},
		{"https://127.0.0.1:" + silentPort + "/", false},
		{"http://127.0.0.1:" + silentPort + "/", false},
	} {
		if got := HTTP(c.url); got != c.want {
			t.Errorf("HTTP(%s) = %v, want %v", c.url, got, c.want)
		}
	}
}
