#!/bin/sh
# Install the mcpctl executable from a GitHub release.
#
#   curl -fsSL https://github.com/mcpctl/mcpctl/releases/latest/download/install.sh | sh
#   curl -fsSL https://github.com/mcpctl/mcpctl/releases/latest/download/install.sh | sh -s -- 0.1.0
#
# Settings (environment):
#   MCPCTL_VERSION       version to install, e.g. 0.1.0 (takes precedence over the first
#                        argument); default: the first argument, else "latest"
#   MCPCTL_INSTALL_DIR   where to put the binary; default: $HOME/.local/bin
#   MCPCTL_REPO          GitHub repository owner/name; default: mcpctl/mcpctl
#   MCPCTL_RELEASE_BASE  releases URL; default: https://github.com/$MCPCTL_REPO/releases
#
# Nothing is installed unless the archive matches its line in SHA256SUMS.

set -eu

die() {
  printf 'mcpctl install: error: %s\n' "$*" >&2
  exit 1
}

info() {
  printf 'mcpctl install: %s\n' "$*"
}

# Prints the release target triple for this machine.
detect_target() {
  os=$(uname -s)
  arch=$(uname -m)

  case "$os" in
    Linux) os_part=unknown-linux-gnu ;;
    Darwin) os_part=apple-darwin ;;
    *)
      die "unsupported operating system: $os (release binaries exist for Linux and macOS; on Windows download the .zip from the releases page)"
      ;;
  esac

  # A shell under Rosetta reports x86_64 on Apple silicon; the native build is better.
  if [ "$os" = Darwin ] && [ "$arch" = x86_64 ] &&
    [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
    arch=arm64
  fi

  case "$arch" in
    x86_64 | amd64) arch_part=x86_64 ;;
    aarch64 | arm64) arch_part=aarch64 ;;
    *)
      die "unsupported architecture: $arch on $os (release binaries exist for x86_64/amd64 and aarch64/arm64)"
      ;;
  esac

  printf '%s-%s\n' "$arch_part" "$os_part"
}

# download URL FILE: fetch URL into FILE, failing on HTTP errors.
download() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL -o "$2" "$1" || die "download failed: $1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1" || die "download failed: $1"
  else
    die "neither curl nor wget is installed; install one of them and retry"
  fi
}

# Prints the lowercase SHA-256 of FILE.
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    digest=$(sha256sum "$1")
  elif command -v shasum >/dev/null 2>&1; then
    digest=$(shasum -a 256 "$1")
  else
    die "neither sha256sum nor shasum is installed; cannot verify the download"
  fi
  printf '%s\n' "${digest%% *}" | tr 'A-F' 'a-f'
}

# Prints the archive name for TARGET listed in the SUMS file (used for "latest", whose
# version is only known from the checksum list).
archive_in_sums() {
  awk -v suffix="-$2.tar.gz" '
    {
      name = $2
      sub(/^\*/, "", name)
      if (name ~ /^mcpctl-[^\/]*$/ && substr(name, length(name) - length(suffix) + 1) == suffix) {
        print name
        exit
      }
    }
  ' "$1"
}

# Prints the expected digest of NAME from the SUMS file (sha256sum format).
digest_in_sums() {
  awk -v want="$2" '
    {
      name = $2
      sub(/^\*/, "", name)
      if (name == want) {
        print tolower($1)
        exit
      }
    }
  ' "$1"
}

main() {
  version=${MCPCTL_VERSION:-${1:-latest}}
  version=${version#v}
  # The version becomes part of a URL and of file names.
  case "$version" in
    "" | *[!A-Za-z0-9._+-]*) die "invalid version '$version' (expected e.g. 0.1.0 or latest)" ;;
  esac

  repo=${MCPCTL_REPO:-mcpctl/mcpctl}
  base=${MCPCTL_RELEASE_BASE:-https://github.com/$repo/releases}
  base=${base%/}
  install_dir=${MCPCTL_INSTALL_DIR:-${HOME:?HOME is not set; set MCPCTL_INSTALL_DIR}/.local/bin}

  target=$(detect_target)

  if [ "$version" = latest ]; then
    url=$base/latest/download
  else
    url=$base/download/v$version
  fi

  tmp=$(mktemp -d 2>/dev/null || mktemp -d -t mcpctl)
  staged=
  # Remove the download directory and any half-copied binary, however we exit.
  trap 'rm -rf "$tmp"; if [ -n "$staged" ]; then rm -f "$staged"; fi' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP

  download "$url/SHA256SUMS" "$tmp/SHA256SUMS"

  if [ "$version" = latest ]; then
    archive=$(archive_in_sums "$tmp/SHA256SUMS" "$target")
    [ -n "$archive" ] || die "the latest release lists no archive for $target in $url/SHA256SUMS"
  else
    archive=mcpctl-$version-$target.tar.gz
  fi

  expected=$(digest_in_sums "$tmp/SHA256SUMS" "$archive")
  [ -n "$expected" ] || die "SHA256SUMS has no line for $archive ($url/SHA256SUMS)"

  info "downloading $url/$archive"
  download "$url/$archive" "$tmp/$archive"

  actual=$(sha256_of "$tmp/$archive")
  if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $archive: expected $expected (SHA256SUMS), got $actual; nothing was installed"
  fi

  mkdir "$tmp/unpacked"
  tar -xzf "$tmp/$archive" -C "$tmp/unpacked" || die "cannot unpack $archive"
  [ -f "$tmp/unpacked/mcpctl" ] || die "$archive does not contain an mcpctl executable"

  mkdir -p "$install_dir" || die "cannot create $install_dir"
  # Copy beside the destination and rename, so a running or concurrent mcpctl never
  # sees a half-written file.
  staged=$install_dir/.mcpctl.tmp.$$
  cp "$tmp/unpacked/mcpctl" "$staged" || die "cannot write to $install_dir"
  chmod 755 "$staged"
  mv -f "$staged" "$install_dir/mcpctl" || die "cannot move mcpctl into $install_dir"
  staged=

  installed_version=${archive#mcpctl-}
  installed_version=${installed_version%-"$target".tar.gz}
  info "installed mcpctl $installed_version ($target) as $install_dir/mcpctl"

  case ":${PATH:-}:" in
    *":$install_dir:"*) ;;
    *)
      # Unprefixed, so the line can be copied as it is.
      printf "\n%s is not on your PATH. Add it in ~/.profile or your shell's rc file:\n\n" \
        "$install_dir"
      printf '  export PATH="%s:%s"\n\n' "$install_dir" "\$PATH"
      ;;
  esac
}

main "$@"
