// A dev server as Vite's prints itself: its URL, then it listens there
// (on $PORT where it is given one, else on a free port).
const http = require("http");
const s = http.createServer((q, r) => r.end("ok\n"));
s.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log(`  Local:   http://localhost:${s.address().port}/`);
});
