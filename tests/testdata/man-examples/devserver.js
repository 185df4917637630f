// A dev server as the page shows it: it prints its URL, then listens
// there (on $PORT where it is given one, else on a port found free), so
// that svc sees the URL before the socket, whatever the machine's load.
const http = require("http");
const serve = (port) => {
  console.log(`  Local:   http://localhost:${port}/`);
  http.createServer((q, r) => r.end("ok\n")).listen(port, "127.0.0.1");
};
if (process.env.PORT) {
  serve(Number(process.env.PORT));
} else {
  const probe = http.createServer();
  probe.listen(0, "127.0.0.1", () => {
    const port = probe.address().port;
    probe.close(() => serve(port));
  });
}
