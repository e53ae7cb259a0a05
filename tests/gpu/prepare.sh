#!/bin/sh
# prepare.sh - gather here what tests/gpu/run.sh needs on a GPU machine that
# reaches no package registry and receives at most 64 MiB of files.
#
#   sh tests/gpu/prepare.sh
#
# Fills .gpu/ (ignored by git; carry it to the GPU machine):
#   .gpu/debs/       the Debian packages the build needs (-dev packages, their
#                    libraries, pkgconf), fetched with 'apt-get download'; run.sh
#                    unpacks them with 'dpkg -x' into a folder of its own and
#                    points CPPFLAGS, LDFLAGS, PKG_CONFIG_PATH and
#                    LD_LIBRARY_PATH at it, so nothing is installed there.
#   .gpu/autotools/  configure and the other files autoreconf makes, so the GPU
#                    machine needs no autoconf, automake or libtool.
#   .gpu/minilm/     all-MiniLM-L6-v2 with its tensors stored as F16 and the
#                    file gzipped (42 MB instead of 87: what a call may carry
#                    is 64 MiB in all, the tree and .gpu/ together),
#                    from ${LPIPE_EMBED_MODEL:-~/.cache/lpipe/models/all-MiniLM-L6-v2}
#                    (scripts/fetch-embedder); skipped with a warning when
#                    that is missing (run.sh then skips the encoder rows).
# Needs apt-get (Debian 12 or a compatible system) and autoreconf. Prints the
# size of .gpu/ at the end. Exit 0 when everything was fetched and made.
set -eu
cd "$(dirname "$0")/../.."

PACKAGES="libyaml-dev libyaml-0-2
libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
libjansson-dev libjansson4 libutf8proc-dev libutf8proc2
check libsubunit-dev libsubunit0
libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0
libgfortran5 libquadmath0
pkgconf pkgconf-bin libpkgconf3"

mkdir -p .gpu/debs .gpu/autotools
# shellcheck disable=SC2086 # one word per package
(cd .gpu/debs && rm -f ./*.deb && apt-get download $PACKAGES)

# autotools output of this tree, made in a scratch copy so the checkout
# keeps whatever state it had
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z -co --exclude-standard | (cd "$(git rev-parse --show-toplevel)" && tar --null -T - -cf -) |
	tar -xf - -C "$tmp"
(cd "$tmp" && autoreconf -fi >/dev/null 2>&1) || { echo "prepare: autoreconf failed" >&2; exit 1; }
rm -rf .gpu/autotools/*
for f in configure Makefile.in aclocal.m4 config.h.in build-aux m4; do
	cp -R "$tmp/$f" .gpu/autotools/
done
src=${LPIPE_EMBED_MODEL:-${LPIPE_MODEL_DIR:-$HOME/.cache/lpipe/models}/all-MiniLM-L6-v2}
if [ -f "$src/model.safetensors" ]; then
	rm -rf .gpu/minilm
	python3 tests/gpu/minilm_f16.py "$src" .gpu/minilm
	gzip -6 .gpu/minilm/model.safetensors
else
	echo "prepare: warning: no MiniLM at $src (scripts/fetch-embedder): no encoder figures" >&2
fi
du -sh .gpu
