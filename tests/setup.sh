#!/usr/bin/env bash
# make test's first step: what the tests need besides Go, installed where it
# can be, or a stop, before any test runs, with the one command to run.
#
#   tests/setup.sh          what make test needs
#   tests/setup.sh --peers  and what make test-peers needs (npm, ip): CI's
#
# It installs with apt-get as root or through passwordless sudo, or with
# brew; anywhere else it names what is missing and the command that
# installs it, and exits 2, so that a missing server never shows up as a
# failing test that looks like a bug. make test SETUP=no skips it.
set -euo pipefail

peers=
[ "${1:-}" = --peers ] && peers=1

# Each need: a check, the Debian package, the Homebrew formula (- for
# none: that need is Debian's own) and why the tests need it.
required= optional=
need() { # kind check deb brew why
	local entry="$2|$3|$4|$5"
	if [ "$1" = required ]; then required+="$entry"$'\n'; else optional+="$entry"$'\n'; fi
}
has() { command -v "$1" >/dev/null 2>&1; }
has_postgres() { has postgres || ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; }
has_mariadbd() { has mariadbd || [ -x /usr/sbin/mariadbd ]; }
has_nginx() { has nginx || [ -x /usr/sbin/nginx ]; }
has_flask() { has python3 && python3 -c 'import flask' 2>/dev/null; }
has_cc() { has gcc || has cc; }

# svc is tested against real servers, found ready without being told how
# (tests/scripts/svc_realservers.txtar); a missing one fails its test.
need required 'has python3' python3 python "svc's real servers (http.server)"
need required 'has node' nodejs node "svc's real servers (a node http server)"
need required 'has perl' perl perl "svc's real servers"
need required 'has redis-server' redis-server redis "svc's real servers and svc up's examples"
need required 'has redis-cli' redis-tools redis "svc_up.txtar's migration"
need required 'has memcached' memcached memcached "svc's real servers"
# nginx-light where the release still has it (Debian 12), else nginx.
nginx_deb=nginx-light
has apt-cache && ! apt-cache show nginx-light >/dev/null 2>&1 && nginx_deb=nginx
need required has_nginx $nginx_deb nginx "svc's real servers"
need required 'has busybox' busybox - "svc's real servers (busybox httpd)"
need required has_postgres postgresql postgresql "svc: ready means usable, after a crash"
need required 'has psql' postgresql-client postgresql "svc: PostgreSQL's readiness"
need required has_mariadbd mariadb-server mariadb "svc: MariaDB's handshake"
need required 'has uwsgi' uwsgi-core uwsgi "svc: SIGTERM reloads uWSGI (--stop-signal)"
need required 'has gunicorn' gunicorn gunicorn "svc: gunicorn with workers"
need required has_flask python3-flask - "svc: flask's reloader"
need required 'has jq' jq jq "ndjson's verbs are checked against jq"
if [ "$(uname -s)" = Linux ]; then
	need required 'has setpriv' util-linux - "PostgreSQL refuses root: the tests run it as nobody"
fi
# Without these the tests still run, with less: each says so.
need optional 'has mandoc' mandoc mandoc "man-lint's full lint and the man-page rendering tests"
need optional has_cc gcc - "the race detector (cgo)"
need optional 'has zsh' zsh zsh "the zsh completion tests"
need optional 'has fish' fish fish "the fish completion tests"
if [ "$(uname -s)" = Linux ]; then
	need optional 'has systemd-analyze' systemd - "svc export systemd's units are checked with systemd-analyze verify"
fi
if [ -n "$peers" ]; then
	need required 'has npm' npm node "make test-peers installs the agent CLIs with it"
	need required 'has ip' iproute2 - "make test-peers' loopback-only network namespace"
fi

# missing ENTRIES: those of the entries, one a line, whose check fails.
missing() {
	local e
	while IFS= read -r e; do
		[ -n "$e" ] || continue
		eval "${e%%|*}" </dev/null || printf '%s\n' "$e"
	done <<<"$1"
}
field() { cut -d'|' -f"$1"; }

# How to install: apt-get (as root, or through sudo -n), or brew.
installer=() ask=()
if has apt-get; then
	if [ "$(id -u)" = 0 ]; then
		installer=(apt-get)
	elif has sudo && sudo -n true 2>/dev/null; then
		installer=(sudo -n apt-get)
	fi
	ask=(sudo apt-get install -y)
	pkgfield=2
elif has brew; then
	installer=(brew)
	ask=(brew install)
	pkgfield=3
else
	pkgfield=2
fi

req=$(missing "$required")
opt=$(missing "$optional")
[ -z "$req" ] && [ -z "$opt" ] && exit 0

# packages ENTRIES: the distinct packages of the entries, - dropped.
packages() { printf '%s\n' "$1" | grep . | field $pkgfield | grep -vx -- - | awk '!seen[$0]++' | tr '\n' ' ' | sed 's/ $//'; }
# explain ENTRIES: a line for each: its package (or Debian's), and why.
explain() {
	local e p
	while IFS= read -r e; do
		[ -n "$e" ] || continue
		p=$(printf '%s' "$e" | field $pkgfield)
		[ "$p" = - ] && p=$(printf '%s' "$e" | field 2)
		printf '  %-18s %s\n' "$p" "$(printf '%s' "$e" | field 4)"
	done <<<"$1"
}

if [ ${#installer[@]} -gt 0 ]; then
	all="$req"$'\n'"$opt"
	pkgs=$(packages "$all")
	if [ -n "$pkgs" ]; then
		echo "setup: installing what the tests need and this machine lacks, with ${installer[*]}:"
		explain "$all"
		# shellcheck disable=SC2086
		if [ "${installer[0]}" = brew ]; then
			brew install $pkgs || failed=1
		else
			export DEBIAN_FRONTEND=noninteractive
			{ "${installer[@]}" update -qq && "${installer[@]}" install -y -qq $pkgs >/dev/null; } </dev/null || failed=1
		fi
	fi
	req=$(missing "$required")
	opt=$(missing "$optional")
	if [ -n "$req" ]; then
		if [ -n "${failed:-}" ]; then
			echo "setup: ${installer[*]} failed (above), so no test runs; once it works: ${ask[*]} $(packages "$req")" >&2
		else
			echo "setup: still missing after the install, so no test runs:" >&2
			explain "$req" >&2
		fi
		exit 2
	fi
fi

if [ -n "$opt" ]; then
	echo "setup: the tests run without these (each test says what it skips):"
	explain "$opt"
fi
if [ -n "$req" ]; then
	{
		echo "setup: the tests need these, and this machine cannot install them unasked, so no test runs:"
		explain "$req"
		pkgs=$(packages "$req")
		if [ ${#ask[@]} -gt 0 ] && [ -n "$pkgs" ]; then
			echo "Install them with:"
			echo "  ${ask[*]} $pkgs"
		else
			echo "Install them with your system's package manager."
		fi
		echo "Or run the tests without them, their tests failing: make test SETUP=no"
	} >&2
	exit 2
fi
