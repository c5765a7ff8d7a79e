#!/usr/bin/env bash
# A second fio, of another version than Debian 12's (3.33), for the fleet test that a
# server of another fio version is refused before a run (crates/cli/tests/fio_fleet.rs).
#
# Debian 11's (bullseye) fio 3.25 package, downloaded with apt-get through a private apt
# state (this machine's apt configuration is not touched) and extracted with dpkg -x
# into /var/cache/drivelab-fio-alt: built against an older glibc, it runs on Debian 12,
# and every library it needs is already there for Debian 12's own fio. (Debian 13's
# package needs a newer glibc; this mirror serves no source packages to build one.)
# Prints the path of the binary.
set -euo pipefail
cache=/var/cache/drivelab-fio-alt
bin="$cache/root/usr/bin/fio"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "$bin"
    exit 0
fi
mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial"
cat > "$cache/apt/sources.list" <<'LIST'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main
LIST
apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$cache/apt/lists" -o "Dir::Cache=$cache/apt/cache"
          -o "APT::Sandbox::User=root")
apt-get "${apt_opts[@]}" update -qq >&2
cd "$cache"
rm -f fio_*.deb
apt-get "${apt_opts[@]}" download fio/bullseye >&2
rm -rf root
dpkg -x fio_*.deb root
"$bin" --version >&2
echo "$bin"
